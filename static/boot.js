// Loads the app's WebAssembly (a file of its own: the page's Content-Security-Policy allows no
// inline script).
import init from "./app.js";
await init({ module_or_path: "./app_bg.wasm" });
