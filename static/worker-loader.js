// Starts the scoring worker: loads wasm-bindgen's classic-script glue (worker.js, built by
// Trunk) and instantiates the worker's WebAssembly, whose main() installs the message handler.
// Messages that arrive while the module is still loading are queued and replayed, since a
// message with no handler is lost. A file of its own (not a blob: URL) so that the page's
// Content-Security-Policy can allow workers from 'self' only.
const pending = [];
self.onmessage = (event) => pending.push(event);
importScripts("./worker.js");
wasm_bindgen({ module_or_path: "./worker_bg.wasm" }).then(() => {
  for (const event of pending) self.onmessage(event);
}, (error) => {
  self.postMessage({ msg: JSON.stringify({ failed: { job: 0, message: "the worker could not start: " + error } }) });
});
