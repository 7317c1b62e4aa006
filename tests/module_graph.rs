//! The crate's modules depend on each other one way: no cycle between sibling modules, at any
//! level (top-level modules such as `ingest` → `formats` → `rollout`; and inside each module,
//! e.g. the formats or the web views). Read from the source: every `crate::…` and `super::…`
//! path outside comments is a dependency of the file's module on the module it names. Unit
//! tests (`#[cfg(test)] mod tests`, last in a file by convention) are skipped: a test module is a
//! leaf that may use anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module path, e.g. `["formats", "canonical", "reader"]`; the crate root is empty.
type ModPath = Vec<String>;

fn module_of(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().unwrap_or_default();
    let stem = file.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<(ModPath, String)>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        let rel = path.strip_prefix(root).expect("under src");
        if rel.starts_with("bin") {
            continue; // the binaries use the library from outside
        }
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("read file");
            out.push((module_of(rel), text));
        }
    }
}

/// The source without comments (line comments, doc comments), string contents, and its unit
/// tests (a `#[cfg(test)]` module, a leaf that may use anything).
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            match lines.peek().map(|l| l.trim()) {
                // Inline unit tests close the file by convention.
                Some("mod tests {") => break,
                Some("mod tests;") => {
                    lines.next();
                    continue;
                }
                _ => {}
            }
        }
        let mut in_str = false;
        let mut prev = ' ';
        let mut kept = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if !in_str && c == '/' && chars.peek() == Some(&'/') {
                break;
            }
            if c == '"' && prev != '\\' {
                in_str = !in_str;
            } else if !in_str {
                kept.push(c);
            }
            prev = c;
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// Every path a `crate::` or `super::` path (with `{…}` groups) names, relative to the crate.
fn references(module: &ModPath, code: &str) -> Vec<ModPath> {
    let bytes: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest: String = bytes[i..bytes.len().min(i + 7)].iter().collect();
        let boundary = i == 0
            || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_' || bytes[i - 1] == ':');
        if boundary && (rest.starts_with("crate::") || rest.starts_with("super::")) {
            let mut base: ModPath = Vec::new();
            let mut j = i;
            if rest.starts_with("crate::") {
                j += 7;
            } else {
                // Each `super` is one level up from the file's module (`mod.rs` or not).
                base = module.clone();
                while bytes[j..].iter().collect::<String>().starts_with("super::") {
                    base.pop();
                    j += 7;
                }
            }
            j = parse_tree(&bytes, j, base, &mut found);
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    found
}

/// Parses `a::b::{c, d::e}` at `i`, pushing each full path; returns where it ended.
fn parse_tree(b: &[char], mut i: usize, mut path: ModPath, found: &mut Vec<ModPath>) -> usize {
    loop {
        while i < b.len() && b[i].is_whitespace() {
            i += 1;
        }
        if i < b.len() && b[i] == '{' {
            i += 1;
            loop {
                i = parse_tree(b, i, path.clone(), found);
                while i < b.len() && b[i].is_whitespace() {
                    i += 1;
                }
                match b.get(i) {
                    Some(',') => i += 1,
                    Some('}') => return i + 1,
                    _ => return i,
                }
                while i < b.len() && b[i].is_whitespace() {
                    i += 1;
                }
                if b.get(i) == Some(&'}') {
                    return i + 1;
                }
            }
        }
        let start = i;
        while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
            i += 1;
        }
        if i > start {
            path.push(b[start..i].iter().collect());
        }
        if b.get(i) == Some(&':') && b.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            found.push(path);
            return i;
        }
    }
}

/// A cycle in `edges`, if any (depth-first search).
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == m).unwrap_or(0);
                    let mut c = stack[at..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, edges, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// Per parent module, the dependencies between its children.
fn sibling_graphs() -> BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    let modules: BTreeSet<ModPath> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut graphs: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (module, text) in &files {
        for target in references(module, &code(text)) {
            // The longest prefix of the path that is a module (the rest names an item).
            let target: ModPath = (0..=target.len())
                .rev()
                .map(|n| target[..n].to_vec())
                .find(|p| modules.contains(p))
                .unwrap_or_default();
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            // A module and its own ancestors or descendants are one unit, not siblings.
            if common == module.len() || common == target.len() {
                continue;
            }
            graphs
                .entry(module[..common].to_vec())
                .or_default()
                .entry(module[common].clone())
                .or_default()
                .insert(target[common].clone());
        }
    }
    graphs
}

#[test]
fn no_module_depends_on_itself_through_its_siblings() {
    let graphs = sibling_graphs();
    // The check sees the real dependencies (not vacuously empty).
    let top = &graphs[&Vec::new()];
    assert!(top["ingest"].contains("formats"), "{top:?}");
    assert!(top["formats"].contains("rollout"), "{top:?}");
    let cycles: Vec<String> = graphs
        .iter()
        .filter_map(|(parent, edges)| {
            cycle(edges).map(|c| format!("in crate::{}: {}", parent.join("::"), c.join(" → ")))
        })
        .collect();
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

#[test]
fn grouped_and_relative_paths_are_read() {
    let m = |s: &str| s.split("::").map(str::to_string).collect::<ModPath>();
    let refs = references(
        &m("formats::tau2::reader"),
        "use super::{draft, x::{y, z}};\nuse crate::rollout::Source;\nlet a = super::super::scan::f();",
    );
    assert_eq!(
        refs,
        vec![
            m("formats::tau2::draft"),
            m("formats::tau2::x::y"),
            m("formats::tau2::x::z"),
            m("rollout::Source"),
            m("formats::scan::f"),
        ]
    );
    assert_eq!(code("let s = \"crate::x\"; // crate::y\n"), "let s = ; \n");
}
