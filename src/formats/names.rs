//! Model names as a person reads them. A locally served model is often named by where its
//! weights lie — a Hugging Face cache path (`/home/<user>/.cache/huggingface/models--Qwen--Qwen3-32B/snapshots/<hash>/`),
//! or that path as BFCL sanitises it into a folder name
//! (`_data_u_.cache_huggingface_hub_models--Qwen--Qwen3-32B_snapshots_<hash>_`). Such a name
//! fills a table's first column and publishes a home folder in every shared report, so the
//! importers read it as the model it names (`Qwen/Qwen3-32B`), keeping the original in the
//! rollout's `meta.model_path`.
//!
//! ```
//! use prefix_exec::formats::names::readable_model;
//! assert_eq!(
//!     readable_model("/nethome/u/.cache/huggingface/models--Qwen--Qwen3-32B/snapshots/9216db57/").as_deref(),
//!     Some("Qwen/Qwen3-32B")
//! );
//! assert_eq!(readable_model("gpt-4o"), None);
//! ```

/// The model a local path names, or `None` when `name` is not a path (it is then kept as is).
pub fn readable_model(name: &str) -> Option<String> {
    if let Some(at) = name.find("models--") {
        // The hub cache's `models--<org>--<name>` folder; what follows it is the snapshot.
        let rest = &name[at + "models--".len()..];
        let end = rest
            .find(['/', '\\'])
            .into_iter()
            .chain(rest.find("_snapshots"))
            .min()
            .unwrap_or(rest.len());
        let repo = rest[..end].trim_end_matches('_');
        let parts: Vec<&str> = repo.split("--").filter(|p| !p.is_empty()).collect();
        return (!parts.is_empty()).then(|| parts.join("/"));
    }
    let is_path = name.starts_with('/')
        || name.starts_with("~/")
        || name.starts_with("./")
        || name.as_bytes().get(1..3) == Some(b":\\");
    if !is_path {
        return None;
    }
    // A plain local folder of weights: its last component that is not a snapshot hash.
    name.split(['/', '\\'])
        .rfind(|c| !c.is_empty() && !matches!(*c, "~" | "." | "snapshots") && !is_hash(c))
        .map(str::to_string)
}

fn is_hash(c: &str) -> bool {
    c.len() >= 12 && c.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::readable_model;

    #[test]
    fn local_paths_read_as_the_model_they_name() {
        let cases = [
            (
                "/nethome/hsuh45/.cache/huggingface/models--Qwen--Qwen3-32B/snapshots/9216db5781bf21249d130ec9da846c4624c16137/",
                Some("Qwen/Qwen3-32B"),
            ),
            (
                "_data_jibf_.cache_huggingface_hub_models--Qwen--Qwen3-32B_snapshots_9216db5781bf21249d130ec9da846c4624c16137_",
                Some("Qwen/Qwen3-32B"),
            ),
            ("models--meta-llama--Llama-3.1-8B-Instruct", Some("meta-llama/Llama-3.1-8B-Instruct")),
            (r"C:\Users\me\.cache\huggingface\hub\models--org--m\snapshots\abc", Some("org/m")),
            ("/data/weights/llama-3-8b-instruct/", Some("llama-3-8b-instruct")),
            ("~/models/Qwen3-8B", Some("Qwen3-8B")),
            ("gpt-4o", None),
            ("openai/gpt-4.1", None),
            ("togetherai/moonshotai/Kimi-K2-Instruct", None),
            ("", None),
            ("models--", None),
        ];
        for (name, want) in cases {
            assert_eq!(readable_model(name).as_deref(), want, "{name}");
        }
    }
}
