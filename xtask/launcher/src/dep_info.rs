//! Reading the dep-info files rustc and cargo write (`target: dep dep…` in make's syntax): the
//! grader reads them to know what a harness was built from, the launcher to know what the grader
//! was built from. One file, compiled into both (the launcher has no dependencies).

use std::path::PathBuf;

/// The files and environment variables a dep-info file lists: `target: dep dep…` lines (spaces
/// in paths escaped with `\`), and `# env-dep:NAME=value` comments.
pub fn parse(text: &str) -> (Vec<PathBuf>, Vec<String>) {
    let mut files = Vec::new();
    let mut env = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# env-dep:") {
            env.push(rest.split('=').next().unwrap_or(rest).to_owned());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let Some((_, deps)) = split_target(line) else {
            continue;
        };
        let mut current = String::new();
        let mut chars = deps.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    current.push(' ');
                    chars.next();
                }
                ' ' => {
                    if !current.is_empty() {
                        files.push(PathBuf::from(std::mem::take(&mut current)));
                    }
                }
                c => current.push(c),
            }
        }
        if !current.is_empty() {
            files.push(PathBuf::from(current));
        }
    }
    (files, env)
}

/// `target: deps` split at the first `: ` (Windows paths hold `C:` with no space after it).
fn split_target(line: &str) -> Option<(&str, &str)> {
    let index = line
        .find(": ")
        .or_else(|| line.strip_suffix(':').map(|s| s.len()))?;
    Some((&line[..index], line.get(index + 2..).unwrap_or("")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_rustc_dep_info_file() {
        let text = "/t/deps/checks-1: /w/checks.rs /w/x\\ y/a.rs\n\n/w/checks.rs:\n/w/x\\ y/a.rs:\n\n# env-dep:CARGO_PKG_NAME=checks\n";
        let (files, env) = parse(text);
        assert_eq!(
            files,
            [PathBuf::from("/w/checks.rs"), PathBuf::from("/w/x y/a.rs")]
        );
        assert_eq!(env, ["CARGO_PKG_NAME"]);
    }

    #[test]
    fn reads_a_windows_path() {
        let text = "C:\\t\\debug\\xtask.exe: C:\\w\\xtask\\src\\main.rs C:\\w\\my\\ dir\\a.rs\n";
        let (files, _) = parse(text);
        assert_eq!(
            files,
            [
                PathBuf::from("C:\\w\\xtask\\src\\main.rs"),
                PathBuf::from("C:\\w\\my dir\\a.rs")
            ]
        );
    }
}
