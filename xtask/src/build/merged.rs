//! The merged harness: the graded crate's `src/` copied beside the harness, with the chapter's
//! checks appended to the end of its `lib.rs` as modules of their own, compiled as one crate.
//!
//! With the graded crate as a dependency of a crate of checks, an edit costs two rustc runs, and
//! the checks' crate is type-checked and generated again whole, because every generic the checks
//! instantiate comes from the crate that changed. As one crate, incremental compilation redoes
//! only what the edit touched. The learner's files are copied, never written to; the copy keeps
//! every line where it was, so a message about the copy is a message about the learner's file
//! once its folder is renamed (see `compiler_messages::shorten_paths`).
//!
//! A crate the merge cannot hold as cargo would build it is graded the other way: a build
//! script, features, a `[lib]` of its own, an edition the checks are not written in, a name at
//! its root that the appended code also declares, or a file included from outside `src/`.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result};
use toml::{Table, Value};

use crate::build::manifest_toml::CrateManifest;
use crate::curriculum::shown_answers::{
    Token, block_comment_end, char_literal_end, is_ident, string_literal, tokens,
};
use crate::util::write_if_changed;

/// The edition the checks are written in; a crate of another edition is not merged.
pub const CHECKS_EDITION: &str = "2024";

/// Manifest tables a merged crate may have: anything else changes how cargo builds it. Cargo
/// ignores the `[workspace]` and `[profile]` of a crate it builds as a dependency, and the
/// checks and the visible tests name the crate by names the harness gives it, whatever its
/// `[lib]` calls it.
const MERGEABLE_TABLES: &[&str] = &[
    "package",
    "dependencies",
    "dev-dependencies",
    "lints",
    "workspace",
    "profile",
    "lib",
];

/// `[lib]` keys a merged crate may set, with the value it must have (None: any).
const MERGEABLE_LIB_KEYS: &[(&str, Option<&str>)] = &[("name", None), ("path", Some("src/lib.rs"))];

/// `[package]` keys that change the build.
const BUILD_CHANGING_PACKAGE_KEYS: &[&str] = &["build", "links", "autolib", "autotests"];

/// Attributes of a crate that change what the appended modules mean or may do.
const ROOT_ATTRIBUTES_THAT_BLOCK: &[&str] = &[
    "forbid",
    "no_std",
    "no_core",
    "no_implicit_prelude",
    "no_main",
    "test_runner",
    "reexport_test_harness_main",
];

/// Why the crate at `graded_dir` cannot be merged with code that declares `declared` at its
/// root, or None when it can.
pub fn refusal(graded_dir: &Path, manifest: &CrateManifest, declared: &[String]) -> Option<String> {
    if let Some(table) = manifest
        .table
        .keys()
        .find(|key| !MERGEABLE_TABLES.contains(&key.as_str()))
    {
        return Some(format!("its manifest has a [{table}] table"));
    }
    if let Some(Value::Table(lib)) = manifest.table.get("lib")
        && let Some((key, _)) = lib.iter().find(|(key, value)| {
            !MERGEABLE_LIB_KEYS.iter().any(|(allowed, wanted)| {
                allowed == key && wanted.is_none_or(|wanted| value.as_str() == Some(wanted))
            })
        })
    {
        return Some(format!("its [lib] sets `{key}`"));
    }
    if let Some(Value::Table(package)) = manifest.table.get("package")
        && let Some(key) = BUILD_CHANGING_PACKAGE_KEYS
            .iter()
            .find(|key| package.contains_key(**key))
    {
        return Some(format!("its [package] sets `{key}`"));
    }
    if graded_dir.join("build.rs").exists() {
        return Some("it has a build script".to_owned());
    }
    match manifest.edition() {
        Ok(edition) if edition == CHECKS_EDITION => {}
        Ok(edition) => return Some(format!("it is written in edition {edition}")),
        Err(error) => return Some(format!("{error:#}")),
    }
    let root = graded_dir.join("src").join("lib.rs");
    let Ok(root_text) = std::fs::read_to_string(&root) else {
        return Some("it has no src/lib.rs".to_owned());
    };
    let root_tokens = tokens(&root_text);
    let declared_at_root = root_declarations(&root_tokens);
    if let Some(name) = declared
        .iter()
        .find(|name| declared_at_root.contains(name.as_str()))
    {
        return Some(format!("its lib.rs declares `{name}` at its root"));
    }
    let inner_attributes = inner_attributes(&root_tokens);
    if let Some(attribute) = ROOT_ATTRIBUTES_THAT_BLOCK
        .iter()
        .find(|attribute| inner_attributes.contains(**attribute))
    {
        return Some(format!("its lib.rs sets `#![{attribute}]`"));
    }
    for file in crate::util::files_under(&graded_dir.join("src"), &[]).ok()? {
        if file.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        if includes_from_outside(&text) {
            return Some(format!(
                "{} includes a file from outside src/",
                file.display()
            ));
        }
        if defines_macros(&text) {
            return Some(format!(
                "{} defines or imports macros, which would reach the checks",
                file.display()
            ));
        }
    }
    None
}

/// True when Rust `source` defines a `macro_rules!` macro or imports macros with
/// `#[macro_use]`: in one crate, a macro defined above the checks' modules is in their scope,
/// and an `assert_eq!` of the graded crate's own would grade every check.
fn defines_macros(source: &str) -> bool {
    source.contains("macro_")
        && tokens(source).iter().any(|token| {
            !token.in_string && (token.text == "macro_rules" || token.text == "macro_use")
        })
}

/// Names a crate root may declare in the namespace of the appended modules: every item name
/// outside braces, and every word of a `use` or `extern crate` outside braces (more than they
/// declare, which only means a crate is graded the other way). Macros that declare items are
/// not followed.
fn root_declarations(tokens: &[Token]) -> BTreeSet<&str> {
    const ITEM_KEYWORDS: &[&str] = &[
        "mod", "fn", "struct", "enum", "union", "trait", "type", "const", "static",
    ];
    let mut declared = BTreeSet::new();
    let mut depth = 0usize;
    let mut in_use = false;
    for (index, token) in tokens.iter().enumerate() {
        if token.in_string {
            continue;
        }
        match token.text.as_str() {
            "{" if !in_use => depth += 1,
            "}" if !in_use => depth = depth.saturating_sub(1),
            ";" => in_use = false,
            "use" | "extern" if depth == 0 => in_use = true,
            word if in_use && word.chars().all(is_ident) => {
                declared.insert(word);
            }
            keyword if depth == 0 && ITEM_KEYWORDS.contains(&keyword) => {
                if let Some(name) = tokens.get(index + 1) {
                    declared.insert(name.text.as_str());
                }
            }
            _ => {}
        }
    }
    declared
}

/// The names of a file's inner attributes: `forbid` for `#![forbid(unsafe_code)]`.
fn inner_attributes(tokens: &[Token]) -> BTreeSet<&str> {
    tokens
        .windows(4)
        .filter(|window| window[0].text == "#" && window[1].text == "!" && window[2].text == "[")
        .map(|window| window[3].text.as_str())
        .collect()
}

/// True when Rust `text` includes a file by a path that leaves its folder upward:
/// `include_str!("../data.txt")` (a comment that looks like one counts too).
fn includes_from_outside(text: &str) -> bool {
    text.match_indices("include").any(|(at, _)| {
        let rest = text[at + "include".len()..]
            .trim_start_matches("_str")
            .trim_start_matches("_bytes");
        let Some(argument) = rest.strip_prefix('!') else {
            return false;
        };
        let argument = argument.trim_start().trim_start_matches(['(', '[', '{']);
        argument
            .trim_start()
            .trim_start_matches(['r', '#', '"'])
            .starts_with("..")
    })
}

/// True when a check file names `crate::`: written for the separate layout, where the checks
/// are the crate's root (a rubric from before the checks reached their siblings by `super::`).
pub fn checks_reach_the_crate_root(check_files: &[&Path]) -> bool {
    check_files.iter().any(|file| {
        std::fs::read_to_string(file).is_ok_and(|text| {
            text.contains("crate")
                && tokens(&text).windows(2).any(|pair| {
                    !pair[0].in_string && pair[0].text == "crate" && pair[1].text == "::"
                })
        })
    })
}

/// Copies every file under `graded_src` into `copy`, with `appended` added to the end of
/// `lib.rs`, and removes what the copy holds that the crate no longer does. Files whose text is
/// already right are left alone, so cargo and rustc see no change where there is none.
pub fn copy_sources(graded_src: &Path, copy: &Path, appended: &str) -> Result<()> {
    let sources = crate::util::files_under(graded_src, &[])?;
    let mut kept = BTreeSet::new();
    for source in &sources {
        let relative = source
            .strip_prefix(graded_src)
            .context("a source file lies under src/")?;
        let target = copy.join(relative);
        let bytes =
            std::fs::read(source).with_context(|| format!("reading {}", source.display()))?;
        let is_rust = relative.extension().is_some_and(|ext| ext == "rs");
        if is_rust && let Ok(text) = std::str::from_utf8(&bytes) {
            let mut text = compiled_as_a_library(text);
            if relative == Path::new("lib.rs") {
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(appended);
            }
            write_if_changed(&target, &text)?;
        } else if std::fs::read(&target).ok().as_deref() != Some(&bytes[..]) {
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            std::fs::write(&target, &bytes)
                .with_context(|| format!("writing {}", target.display()))?;
        }
        kept.insert(target);
    }
    for stale in crate::util::files_under(copy, &[])?
        .into_iter()
        .filter(|file| !kept.contains(file))
    {
        std::fs::remove_file(&stale).with_context(|| format!("removing {}", stale.display()))?;
    }
    Ok(())
}

/// The word a merged copy reads in place of `test` in a `cfg` predicate: a name cargo expects
/// (so no lint fires) and never sets outside docs.rs.
const UNSET_CFG: &str = "docsrs";

/// `source` as the graded crate compiles when the checks use it as a library. The harness is
/// built with `--test`, which sets `cfg(test)` for the whole crate, so every `test` in a `cfg`
/// predicate (`#[cfg(test)]`, `#[cfg_attr(test, …)]`, `cfg!(test)`, `not(test)`) is read as an
/// unset name instead: the graded crate's own unit tests vanish as they do from its library,
/// and code that differs under test keeps its library form. Comments and strings stay as they
/// are; every line keeps its number.
pub fn compiled_as_a_library(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    // Inside a predicate, the depth of its parentheses; `cfg` was the last word before it.
    let mut predicate_depth = 0usize;
    let mut after_cfg = false;
    while i < chars.len() {
        let c = chars[i];
        // Comments, strings and characters go over whole.
        let literal_end = if c == '/' && chars.get(i + 1) == Some(&'/') {
            Some(
                chars[i..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(chars.len(), |n| i + n),
            )
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            Some(block_comment_end(&chars, i))
        } else if let Some((_, end)) = string_literal(&chars, i) {
            Some(end)
        } else if c == '\'' {
            Some(char_literal_end(&chars, i).unwrap_or(i + 1))
        } else {
            None
        };
        if let Some(end) = literal_end {
            out.extend(&chars[i..end]);
            i = end;
            continue;
        }
        if is_ident(c) {
            let end = chars[i..]
                .iter()
                .position(|&c| !is_ident(c))
                .map_or(chars.len(), |n| i + n);
            let word: String = chars[i..end].iter().collect();
            let in_predicate = predicate_depth > 0;
            out.push_str(if in_predicate && word == "test" {
                UNSET_CFG
            } else {
                &word
            });
            after_cfg = !in_predicate && (word == "cfg" || word == "cfg_attr");
            i = end;
            continue;
        }
        match c {
            '(' if predicate_depth > 0 => predicate_depth += 1,
            '(' if after_cfg => predicate_depth = 1,
            ')' if predicate_depth > 0 => predicate_depth -= 1,
            _ => {}
        }
        if c != '!' && !c.is_whitespace() {
            after_cfg = false;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Adds the graded crate's dependency `name` to the harness's `dependencies`, which may already
/// hold it for the checks: the two specs must agree on everything but features, which add up
/// as cargo would add them across two crates. False when they disagree.
pub fn add_dependency(dependencies: &mut Table, name: &str, spec: Value) -> bool {
    let Some(existing) = dependencies.get_mut(name) else {
        dependencies.insert(name.to_owned(), spec);
        return true;
    };
    let (Some(mut ours), Some(theirs)) = (as_table(existing), as_table(&spec)) else {
        return false;
    };
    let without_features = |table: &Table| -> Table {
        table
            .iter()
            .filter(|(key, _)| *key != "features" && *key != "default-features")
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect()
    };
    if without_features(&ours) != without_features(&theirs) {
        return false;
    }
    let features: BTreeSet<&str> = [&ours, &theirs]
        .into_iter()
        .filter_map(|table| table.get("features").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !features.is_empty() {
        let features = features
            .into_iter()
            .map(|feature| Value::String(feature.to_owned()))
            .collect();
        ours.insert("features".to_owned(), Value::Array(features));
    }
    let default_features =
        |table: &Table| table.get("default-features").and_then(Value::as_bool) != Some(false);
    if default_features(&ours) || default_features(&theirs) {
        ours.remove("default-features");
    }
    *existing = Value::Table(ours);
    true
}

/// A dependency spec as a table: a bare version string is `{ version = "…" }`.
fn as_table(spec: &Value) -> Option<Table> {
    match spec {
        Value::String(version) => Some(Table::from_iter([(
            "version".to_owned(),
            Value::String(version.clone()),
        )])),
        Value::Table(table) => Some(table.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A crate in a fresh folder with `manifest` and `lib`.
    fn crate_with(name: &str, manifest: &str, lib: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("merged-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
        std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
        dir
    }

    const PLAIN: &str = "[package]\nname = \"a\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
                         [dependencies]\nrand = \"0.10\"\n";

    fn refusal_of(dir: &Path) -> Option<String> {
        let manifest = CrateManifest::read(dir).unwrap();
        refusal(
            dir,
            &manifest,
            &["support".to_owned(), "exercise".to_owned()],
        )
    }

    #[test]
    fn a_plain_crate_is_merged() {
        let dir = crate_with(
            "plain",
            PLAIN,
            "//! Docs.\n#![allow(dead_code)]\npub mod stubs;\n",
        );
        assert_eq!(refusal_of(&dir), None);
        let copy =
            format!("{PLAIN}\n[lib]\nname = \"b\"\n\n[workspace]\n\n[profile.dev]\ndebug = 0\n");
        let dir = crate_with("graders-copy", &copy, "");
        assert_eq!(refusal_of(&dir), None, "a copy the grader made of a crate");
    }

    #[test]
    fn what_would_change_the_build_or_the_names_is_refused() {
        let library = format!("{PLAIN}\n[lib]\nname = \"b\"\ncrate-type = [\"cdylib\"]\n");
        let dir = crate_with("lib", &library, "");
        assert_eq!(
            refusal_of(&dir).as_deref(),
            Some("its [lib] sets `crate-type`")
        );
        let features = format!("{PLAIN}\n[features]\nfast = []\n");
        let dir = crate_with("features", &features, "");
        assert_eq!(
            refusal_of(&dir).as_deref(),
            Some("its manifest has a [features] table")
        );
        let old = PLAIN.replace("2024", "2021");
        let dir = crate_with("edition", &old, "");
        assert_eq!(
            refusal_of(&dir).as_deref(),
            Some("it is written in edition 2021")
        );
        let dir = crate_with("names", PLAIN, "mod support;\n");
        assert_eq!(
            refusal_of(&dir).as_deref(),
            Some("its lib.rs declares `support` at its root")
        );
        let dir = crate_with("used", PLAIN, "pub use stubs::{Clock, exercise as e};\n");
        assert_eq!(
            refusal_of(&dir).as_deref(),
            Some("its lib.rs declares `exercise` at its root")
        );
        let dir = crate_with("forbid", PLAIN, "#![forbid(unsafe_code)]\n");
        assert_eq!(
            refusal_of(&dir).as_deref(),
            Some("its lib.rs sets `#![forbid]`")
        );
        let dir = crate_with(
            "macro",
            PLAIN,
            "macro_rules! assert_eq { ($($t:tt)*) => {}; }\n",
        );
        assert!(refusal_of(&dir).unwrap().contains("macros"));
        let dir = crate_with(
            "outside",
            PLAIN,
            "pub const DATA: &str = include_str!(\"../data.txt\");\n",
        );
        assert!(refusal_of(&dir).unwrap().contains("from outside src/"));
        let dir = crate_with(
            "inside",
            PLAIN,
            "// mod support; in a comment\npub const DATA: &str = include_str!(\"data.txt\");\n\
             pub const NAME: &str = \"exercise\";\n\
             pub fn run() { let support = 1; mod exercise {} }\n",
        );
        assert_eq!(
            refusal_of(&dir),
            None,
            "comments, strings and what a body declares name nothing at the root"
        );
    }

    #[test]
    fn the_copy_follows_the_crate_and_keeps_its_lines() {
        let dir = crate_with("copy", PLAIN, "pub mod stubs;");
        std::fs::create_dir_all(dir.join("src/sql")).unwrap();
        std::fs::write(dir.join("src/stubs.rs"), "pub fn a() {}\n").unwrap();
        std::fs::write(dir.join("src/sql/schema.sql"), "CREATE TABLE t (x);\n").unwrap();
        let copy = dir.join("copy");
        copy_sources(&dir.join("src"), &copy, "mod appended;\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(copy.join("lib.rs")).unwrap(),
            "pub mod stubs;\nmod appended;\n"
        );
        assert!(copy.join("sql/schema.sql").is_file());
        std::fs::remove_file(dir.join("src/stubs.rs")).unwrap();
        copy_sources(&dir.join("src"), &copy, "mod appended;\n").unwrap();
        assert!(
            !copy.join("stubs.rs").exists(),
            "a file the crate lost goes"
        );
    }

    #[test]
    fn the_copy_reads_cfg_test_as_a_library_build_does() {
        let source = "#[cfg(test)]\nmod tests {}\n#[cfg(not(test))]\nfn real() {}\n\
                      #[cfg_attr(test, derive(Debug))]\nstruct S;\n\
                      fn f() -> bool { cfg!(test) && cfg!( any(test, unix) ) }\n\
                      // cfg(test) in a comment\nconst T: &str = \"cfg(test)\";\n\
                      const R: &str = r#\"cfg(test)\"#;\n\
                      fn test<'a>(x: &'a str) { let c = '('; test(x); }\n";
        let copied = compiled_as_a_library(source);
        assert_eq!(
            copied,
            "#[cfg(docsrs)]\nmod tests {}\n#[cfg(not(docsrs))]\nfn real() {}\n\
             #[cfg_attr(docsrs, derive(Debug))]\nstruct S;\n\
             fn f() -> bool { cfg!(docsrs) && cfg!( any(docsrs, unix) ) }\n\
             // cfg(test) in a comment\nconst T: &str = \"cfg(test)\";\n\
             const R: &str = r#\"cfg(test)\"#;\n\
             fn test<'a>(x: &'a str) { let c = '('; test(x); }\n"
        );
        assert_eq!(copied.lines().count(), source.lines().count());
    }

    #[test]
    fn features_add_up_and_other_differences_refuse() {
        let spec = |text: &str| -> Value { toml::from_str::<Table>(text).unwrap()["d"].clone() };
        let mut dependencies = Table::new();
        dependencies.insert(
            "d".to_owned(),
            spec("d = { version = \"1\", default-features = false, features = [\"a\"] }"),
        );
        assert!(add_dependency(
            &mut dependencies,
            "d",
            spec("d = { version = \"1\", default-features = false, features = [\"b\"] }")
        ));
        assert_eq!(
            dependencies["d"].to_string(),
            "{ default-features = false, features = [\"a\", \"b\"], version = \"1\" }"
        );
        assert!(add_dependency(&mut dependencies, "d", spec("d = \"1\"")));
        assert_eq!(
            dependencies["d"].get("default-features"),
            None,
            "one side wants the default features"
        );
        assert!(!add_dependency(&mut dependencies, "d", spec("d = \"2\"")));
        assert!(add_dependency(&mut dependencies, "e", spec("d = \"3\"")));
    }
}
