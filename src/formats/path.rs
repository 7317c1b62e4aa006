//! A file name's path components, whichever separator it was written with.

/// The non-empty components of `path`, split at `/` and at `\`. Split at one separator at a
/// time: a one-character pattern is searched bytewise, where the set of both is matched char by
/// char, and this runs for every member of an archive and every file of a run folder.
pub(crate) fn components(path: &str) -> impl Iterator<Item = &str> {
    path.split('/')
        .flat_map(|c| c.split('\\'))
        .filter(|c| !c.is_empty())
}

#[cfg(test)]
mod tests {
    use super::components;

    #[test]
    fn either_separator_and_no_empty_components() {
        let got: Vec<&str> = components(r"/runs\a//b\\c/d.json/").collect();
        assert_eq!(got, ["runs", "a", "b", "c", "d.json"]);
        let mixed = r"x\y/z";
        let both: Vec<&str> = mixed.split(['/', '\\']).collect();
        assert_eq!(components(mixed).collect::<Vec<_>>(), both);
        assert_eq!(components("").count(), 0);
        assert_eq!(components("//\\").count(), 0);
    }
}
