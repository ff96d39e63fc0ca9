//! Mutants: known-wrong solutions, written as edits to the reference solution
//! (`xtask/mutants/<chapter>/<bug>.toml`). Each must be rejected by the check it names.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use toml::{Table, Value};

use crate::manifest_toml::CrateManifest;
use crate::util::write_if_changed;
use crate::workbook::{Chapter, Workbook, read_text_lf};

/// One mutant.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Mutant {
    #[serde(skip)]
    pub name: String,
    /// The bug, in one sentence, shown when the mutant survives.
    pub description: String,
    /// The ids of the checks that must fail on this mutant: one id, or a list of them.
    #[serde(deserialize_with = "one_or_many")]
    pub rejected_by: Vec<String>,
    /// In a learner-tests chapter: the points for a suite that kills this mutant.
    #[serde(default = "one_point")]
    pub points: u32,
    /// In a learner-tests chapter: the book section that helps to write the killing test.
    #[serde(default)]
    pub section: Option<String>,
    #[serde(rename = "edit")]
    pub edits: Vec<Edit>,
}

/// One textual change to a file of the solution.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    #[serde(default = "default_file")]
    pub file: String,
    pub find: String,
    pub replace: String,
}

/// `"a"` or `["a", "b"]`.
fn one_or_many<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(id) => vec![id],
        OneOrMany::Many(ids) => ids,
    })
}

fn one_point() -> u32 {
    1
}

fn default_file() -> String {
    "src/lib.rs".to_owned()
}

/// How many mutants a chapter has, without reading them.
pub fn count(dir: &Path) -> usize {
    mutant_files(dir).map_or(0, |files| files.len())
}

/// Every mutant of a chapter, sorted by name.
pub fn load_all(dir: &Path) -> Result<Vec<Mutant>> {
    let mut mutants = mutant_files(dir)?
        .iter()
        .map(|path| load(path))
        .collect::<Result<Vec<_>>>()?;
    mutants.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(mutants)
}

/// The mutant files (`*.toml`) of a chapter's mutants folder; none when there is no folder.
fn mutant_files(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "toml") {
            files.push(path);
        }
    }
    Ok(files)
}

/// One mutant file.
pub fn load(path: &Path) -> Result<Mutant> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut mutant: Mutant =
        toml::from_str(&text).map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?;
    mutant.name = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or_default()
        .to_owned();
    if mutant.edits.is_empty() {
        bail!("{}: a mutant needs at least one [[edit]]", path.display());
    }
    if mutant.rejected_by.is_empty() {
        bail!("{}: `rejected-by` names no check", path.display());
    }
    Ok(mutant)
}

/// The mutant `name` of `chapter`, or an error that lists the ones it has.
pub fn find(workbook: &Workbook, chapter: &Chapter, name: &str) -> Result<Mutant> {
    let dir = workbook.mutants_dir(chapter);
    let file = dir.join(format!("{}.toml", name.trim_end_matches(".toml")));
    if !file.is_file() {
        let known: Vec<String> = load_all(&dir)?.into_iter().map(|m| m.name).collect();
        bail!(
            "{} has no mutant `{name}`; it has: {}",
            chapter.id,
            known.join(", ")
        );
    }
    load(&file)
}

/// Writes the mutant as a crate under `target/workbook/…/mutants/<chapter>/` and returns its
/// folder. Every `find` must occur exactly once in its file, so a mutant cannot silently go stale.
pub fn materialize(workbook: &Workbook, chapter: &Chapter, mutant: &Mutant) -> Result<PathBuf> {
    let target = workbook.work_dir().join("mutants").join(&chapter.id);
    write_crate_copy(
        &workbook.solution_dir(chapter),
        &target,
        &CrateCopy {
            package: &format!("{}_mutant", chapter.crate_name()),
            mutant: Some(mutant),
            ..CrateCopy::default()
        },
    )?;
    Ok(target)
}

/// An unchanged, stand-alone copy of the solution under `target/workbook/…/<purpose>/<chapter>/`.
pub fn copy_of_solution(workbook: &Workbook, chapter: &Chapter, purpose: &str) -> Result<PathBuf> {
    let target = workbook.work_dir().join(purpose).join(&chapter.id);
    write_crate_copy(
        &workbook.solution_dir(chapter),
        &target,
        &CrateCopy {
            package: &format!("{}_{purpose}", chapter.crate_name()),
            ..CrateCopy::default()
        },
    )?;
    Ok(target)
}

/// The folder to grade for a crate given by path. A crate that no workspace encloses but whose
/// manifest inherits from one (an exercise copied out with `cp -r`) is graded as a stand-alone
/// copy under `target/workbook/…/outside/<chapter>/`, each `workspace = true` read from the
/// workbook's own manifest; any other crate is graded where it is.
pub fn gradable_copy(workbook: &Workbook, chapter: &Chapter, dir: &Path) -> Result<PathBuf> {
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .with_context(|| format!("reading {}", manifest.display()))?;
    if crate::manifest_toml::enclosing_workspace(dir).is_ok() || !text.contains("workspace") {
        return Ok(dir.to_path_buf());
    }
    let outside = workbook.work_dir().join("outside").join(&chapter.id);
    // The crate as it is, inside the workbook, so that its inherited settings resolve there.
    let staged = outside.join("as-given");
    if staged.exists() {
        std::fs::remove_dir_all(&staged)
            .with_context(|| format!("clearing {}", staged.display()))?;
    }
    for (relative, file) in crate_files(dir)? {
        write_if_changed(&staged.join(relative), &file)?;
    }
    write_if_changed(&staged.join("Cargo.toml"), &text)?;
    let copy = outside.join("crate");
    write_crate_copy(
        &staged,
        &copy,
        &CrateCopy {
            package: &format!("{}_outside", chapter.crate_name()),
            ..CrateCopy::default()
        },
    )?;
    Ok(copy)
}

/// How a stand-alone copy of a crate differs from its source.
#[derive(Debug, Default)]
pub struct CrateCopy<'a> {
    /// The copy's package name (cargo tells builds apart by it).
    pub package: &'a str,
    /// The library's name; by default the source's package name, so code that `use`s it compiles.
    pub library: Option<&'a str>,
    /// Files (relative path, text) put in place of the source's, or added.
    pub replaced: &'a [(String, String)],
    /// Edits applied after that.
    pub mutant: Option<&'a Mutant>,
    /// A member of a workspace the caller writes (which holds the profiles), rather than a
    /// workspace of its own.
    pub workspace_member: bool,
}

/// Writes a stand-alone copy of the crate at `source` into `target`, as `copy` describes.
/// Files are rewritten only when they change, so an unchanged copy costs no rebuild.
pub fn write_crate_copy(source: &Path, target: &Path, copy: &CrateCopy) -> Result<()> {
    let mut files = crate_files(source)?;
    for (relative, text) in copy.replaced {
        match files.iter_mut().find(|(file, _)| file == relative) {
            Some((_, old)) => old.clone_from(text),
            None => files.push((relative.clone(), text.clone())),
        }
    }
    if let Some(mutant) = copy.mutant {
        apply(mutant, &mut files)?;
    }
    for (relative, text) in &files {
        write_if_changed(&target.join(relative), text)?;
    }
    write_if_changed(
        &target.join("Cargo.toml"),
        &standalone_manifest(source, copy)?,
    )?;
    Ok(())
}

/// Applies the mutant's edits; each `find` must occur exactly once in its file.
fn apply(mutant: &Mutant, files: &mut [(String, String)]) -> Result<()> {
    for (relative, text) in files.iter_mut() {
        let edits: Vec<&Edit> = mutant
            .edits
            .iter()
            .filter(|edit| edit.file == *relative)
            .collect();
        if edits.is_empty() {
            continue;
        }
        let original = text.clone();
        for edit in &edits {
            let found = text.matches(edit.find.as_str()).count();
            if found != 1 {
                bail!(
                    "mutant {}: `find` must occur exactly once in {}, but occurs {found} times:\n{}",
                    mutant.name,
                    edit.file,
                    edit.find
                );
            }
            *text = text.replacen(edit.find.as_str(), &edit.replace, 1);
        }
        if let Some(aligned) = keeping_lines(&original, &edits)
            .filter(|aligned| non_blank_lines(aligned).eq(non_blank_lines(text)))
        {
            *text = aligned;
        }
    }
    if let Some(edit) = mutant
        .edits
        .iter()
        .find(|edit| !files.iter().any(|(relative, _)| *relative == edit.file))
    {
        bail!(
            "mutant {}: the crate has no file {}",
            mutant.name,
            edit.file
        );
    }
    Ok(())
}

/// `original` with `edits` made and every line between and after them where it was: after an
/// edit that is shorter by N lines come N blank lines, after one that is longer the first N
/// blank lines go. Rustc's incremental cache then finds the code around the edits unchanged,
/// spans included, and a mutant recompiles in about half the time (a span that moves is a
/// change to every function below it). Blank lines are added and taken only where a line of
/// `original` begins in code, never inside a string or a comment. `None` when an edit's `find`
/// is not once in `original` or two overlap; [`apply`] keeps the result only if it is the plain
/// one but for blank lines.
fn keeping_lines(original: &str, edits: &[&Edit]) -> Option<String> {
    let mut located: Vec<(usize, &Edit)> = Vec::new();
    for edit in edits {
        let mut found = original.match_indices(edit.find.as_str());
        let (at, _) = found.next()?;
        if found.next().is_some() {
            return None;
        }
        located.push((at, edit));
    }
    located.sort_by_key(|(at, _)| *at);
    let in_code = crate::code_lines::starts_in_code(original);
    let mut aligned = String::with_capacity(original.len());
    let mut lines_added: isize = 0;
    let mut cursor = 0;
    let mut line = 0;
    let ends = located
        .iter()
        .map(|(at, edit)| (*at, Some(*edit)))
        .chain([(original.len(), None)]);
    for (at, edit) in ends {
        if at < cursor {
            return None;
        }
        // The unchanged text before this edit, a line at a time.
        for piece in original[cursor..at].split_inclusive('\n') {
            let begins_line = cursor == 0 || original.as_bytes()[cursor - 1] == b'\n';
            if begins_line && in_code[line] {
                if lines_added < 0 {
                    aligned.extend(std::iter::repeat_n('\n', lines_added.unsigned_abs()));
                    lines_added = 0;
                }
                let whole_blank_line = piece.ends_with('\n') && piece.trim().is_empty();
                if lines_added > 0 && whole_blank_line {
                    lines_added -= 1;
                    cursor += piece.len();
                    line += 1;
                    continue;
                }
            }
            aligned.push_str(piece);
            cursor += piece.len();
            line += usize::from(piece.ends_with('\n'));
        }
        let Some(edit) = edit else { break };
        let lines_found = edit.find.matches('\n').count();
        aligned.push_str(&edit.replace);
        lines_added += edit.replace.matches('\n').count() as isize - lines_found as isize;
        cursor = at + edit.find.len();
        line += lines_found;
    }
    Some(aligned)
}

/// The lines of `text` that hold more than whitespace.
fn non_blank_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|line| !line.trim().is_empty())
}

/// The solution's source files (src/, tests/, examples/), as (relative path, text).
pub fn crate_files(dir: &Path) -> Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    for folder in ["src", "tests", "examples"] {
        collect(dir, &dir.join(folder), &mut files)?;
    }
    Ok(files)
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) -> Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect(root, &path, files)?;
        } else {
            // Written with `/` whatever the platform, as mutant edits name their files.
            let relative = path
                .strip_prefix(root)
                .expect("below root")
                .components()
                .map(|part| part.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            // Unix line endings whatever the checkout, as mutant `find` strings are written.
            let text = read_text_lf(&path)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .with_context(|| format!("reading {} as text", path.display()))?;
            files.push((relative, text));
        }
    }
    Ok(())
}

/// The source's manifest made stand-alone, under another package name.
fn standalone_manifest(source: &Path, copy: &CrateCopy) -> Result<String> {
    let manifest = CrateManifest::read(source)?;
    let (package, library) = (copy.package, copy.library);
    let mut table = Table::new();
    table.insert(
        "package".to_owned(),
        Value::Table(Table::from_iter([
            ("name".to_owned(), Value::String(package.to_owned())),
            ("version".to_owned(), Value::String("0.0.0".to_owned())),
            ("edition".to_owned(), Value::String("2024".to_owned())),
            ("publish".to_owned(), Value::Boolean(false)),
        ])),
    );
    // The library keeps the source's name, so code and tests that `use` it still compile.
    let library = match library {
        Some(name) => name.to_owned(),
        None => manifest.package_name()?.replace('-', "_"),
    };
    table.insert(
        "lib".to_owned(),
        Value::Table(Table::from_iter([(
            "name".to_owned(),
            Value::String(library),
        )])),
    );
    for section in ["dependencies", "dev-dependencies"] {
        table.insert(
            section.to_owned(),
            Value::Table(manifest.resolved_dependencies(section)?),
        );
    }
    // Its own workspace, built like the real one, so it shares the compiled dependencies.
    if !copy.workspace_member {
        table.insert("workspace".to_owned(), Value::Table(Table::new()));
        if let Some(profiles) = source_profiles(source, &[package])? {
            table.insert("profile".to_owned(), profiles);
        }
    }
    Ok(format!(
        "# Generated by the grader from {}; every run rewrites it.\n{}",
        source.display(),
        toml::to_string(&table).context("writing a crate copy's manifest")?
    ))
}

/// Writes, at `root`, the manifest of a workspace of copies of the crate at `source` (each
/// written with `workspace_member`): `members` are their folders under `root` and their package
/// names. The workspace holds the profiles, as a stand-alone copy does, with the copies built
/// without debug info.
pub fn write_workspace(source: &Path, root: &Path, members: &[(&str, &str)]) -> Result<()> {
    let folders = members.iter().map(|(folder, _)| Value::from(*folder));
    let workspace = Table::from_iter([
        ("members".to_owned(), Value::Array(folders.collect())),
        ("resolver".to_owned(), Value::from("3")),
    ]);
    let mut manifest = Table::from_iter([("workspace".to_owned(), Value::Table(workspace))]);
    let packages: Vec<&str> = members.iter().map(|(_, package)| *package).collect();
    // The copies' suites are run only to see whether they pass: no debug info needed.
    let profiles =
        crate::manifest_toml::without_debug_info(source_profiles(source, &packages)?, &packages);
    manifest.insert("profile".to_owned(), profiles);
    write_if_changed(
        &root.join("Cargo.toml"),
        &format!(
            "# Generated by the grader: copies of {}, built side by side.\n{}",
            source.display(),
            toml::to_string(&manifest).context("writing a workspace manifest")?
        ),
    )?;
    Ok(())
}

/// The profiles of the workspace around `source`, for a build of `packages`.
fn source_profiles(source: &Path, packages: &[&str]) -> Result<Option<Value>> {
    let root = crate::manifest_toml::enclosing_workspace(source)?;
    crate::manifest_toml::workspace_profiles_for(&root, packages)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line of `text` that holds `needle`.
    fn line_of(text: &str, needle: &str) -> usize {
        text.lines().position(|line| line.contains(needle)).unwrap()
    }

    /// `text` as src/lib.rs after a mutant with these edits (find, replace).
    fn mutated(text: &str, edits: &[(&str, &str)]) -> String {
        let mutant = Mutant {
            name: "test".to_owned(),
            description: String::new(),
            rejected_by: Vec::new(),
            points: 1,
            section: None,
            edits: edits
                .iter()
                .map(|(find, replace)| Edit {
                    file: default_file(),
                    find: (*find).to_owned(),
                    replace: (*replace).to_owned(),
                })
                .collect(),
        };
        let mut files = vec![("src/lib.rs".to_owned(), text.to_owned())];
        apply(&mutant, &mut files).unwrap();
        files.remove(0).1
    }

    #[test]
    fn an_edit_leaves_every_line_below_it_where_it_was() {
        let text = "fn a() -> u32 {\n    let x = 1;\n    x + 1\n}\n\nfn b() {}\n\nfn c() {}\n";
        let shorter = mutated(text, &[("    let x = 1;\n    x + 1", "    2")]);
        assert_eq!(line_of(&shorter, "fn b"), line_of(text, "fn b"));
        assert!(shorter.contains("{\n    2\n\n}\n"), "{shorter}");

        let longer = mutated(text, &[("    x + 1", "    let y = x;\n    y + 2")]);
        assert_eq!(line_of(&longer, "fn b"), line_of(text, "fn b"));
        assert_eq!(line_of(&longer, "fn c"), line_of(text, "fn c"));
        assert_eq!(longer.lines().count(), text.lines().count());
    }

    #[test]
    fn a_later_edit_still_finds_the_blank_lines_an_earlier_one_would_take() {
        let text = "fn a() {\n    one();\n}\n\nfn b() {\n    two();\n}\n\nfn c() {}\n";
        let both = mutated(
            text,
            &[
                ("    one();", "    one();\n    one();"),
                ("}\n\nfn b() {\n    two();", "}\n\nfn b() {\n    three();"),
            ],
        );
        assert!(both.contains("three();"), "{both}");
        assert_eq!(line_of(&both, "fn c"), line_of(text, "fn c"));
    }

    #[test]
    fn blank_lines_inside_strings_and_comments_are_never_taken() {
        let text = "fn a() -> &'static str {\n    \"one\n\ntwo\"\n}\n/*\n\n*/\n\nfn b() {}\n";
        let longer = mutated(text, &[("fn a()", "#[inline]\nfn a()")]);
        assert!(longer.contains("\"one\n\ntwo\""), "{longer}");
        assert!(longer.contains("/*\n\n*/"), "{longer}");
        assert_eq!(line_of(&longer, "fn b"), line_of(text, "fn b"));
        // A shorter edit inside an open string adds its blank line after the string ends.
        let shorter = mutated(text, &[("    \"one\n", "    \"one ")]);
        assert!(shorter.contains("\"one \ntwo\"\n"), "{shorter}");
        assert_eq!(line_of(&shorter, "fn b"), line_of(text, "fn b"));
    }

    #[test]
    fn a_windows_checkout_is_read_with_unix_paths_and_line_endings() {
        let dir = std::env::temp_dir().join(format!("workbook-crate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src").join("retry")).unwrap();
        std::fs::write(dir.join("src").join("lib.rs"), "mod retry;\r\n").unwrap();
        std::fs::write(
            dir.join("src").join("retry").join("policy.rs"),
            "pub fn attempts() -> u32 {\r\n    3\r\n}\r\n",
        )
        .unwrap();
        let mut files = crate_files(&dir).unwrap();
        files.sort();
        assert_eq!(
            files,
            [
                ("src/lib.rs".to_owned(), "mod retry;\n".to_owned()),
                (
                    "src/retry/policy.rs".to_owned(),
                    "pub fn attempts() -> u32 {\n    3\n}\n".to_owned()
                ),
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn rejected_by_is_one_check_or_a_list() {
        let dir = std::env::temp_dir().join(format!("mutant-format-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let edit = "\n[[edit]]\nfind = \"a\"\nreplace = \"b\"\n";
        let one = dir.join("one.toml");
        std::fs::write(
            &one,
            format!("description = \"d\"\nrejected-by = \"x.y\"{edit}"),
        )
        .unwrap();
        let many = dir.join("many.toml");
        std::fs::write(
            &many,
            format!("description = \"d\"\nrejected-by = [\"x.y\", \"x.z\"]{edit}"),
        )
        .unwrap();
        assert_eq!(load(&one).unwrap().rejected_by, ["x.y"]);
        assert_eq!(load(&many).unwrap().rejected_by, ["x.y", "x.z"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn mutant(find: &str) -> Mutant {
        Mutant {
            name: "m".to_owned(),
            description: String::new(),
            rejected_by: vec!["x.y".to_owned()],
            points: 1,
            section: None,
            edits: vec![Edit {
                file: "src/lib.rs".to_owned(),
                find: find.to_owned(),
                replace: "2".to_owned(),
            }],
        }
    }

    #[test]
    fn a_copy_applies_each_edit_exactly_once_or_refuses() {
        let dir = std::env::temp_dir().join(format!("mutant-copy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("source/src")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[workspace]\nmembers = [\"source\"]\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("source/Cargo.toml"),
            "[package]\nname = \"source_solution\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("source/src/lib.rs"),
            "pub const A: u8 = 1;\npub const B: u8 = 7;\n",
        )
        .unwrap();
        let copy = |find: &str, library: Option<&str>| {
            write_crate_copy(
                &dir.join("source"),
                &dir.join("copy"),
                &CrateCopy {
                    package: "copy_pkg",
                    library,
                    mutant: Some(&mutant(find)),
                    ..CrateCopy::default()
                },
            )
        };
        copy("7", Some("source")).unwrap();
        let lib = std::fs::read_to_string(dir.join("copy/src/lib.rs")).unwrap();
        assert_eq!(lib, "pub const A: u8 = 1;\npub const B: u8 = 2;\n");
        let manifest = std::fs::read_to_string(dir.join("copy/Cargo.toml")).unwrap();
        assert!(manifest.contains("name = \"copy_pkg\""), "{manifest}");
        assert!(
            manifest.contains("name = \"source\""),
            "the library's name: {manifest}"
        );
        let twice = copy("u8 =", None).unwrap_err();
        assert!(format!("{twice:#}").contains("occurs 2 times"), "{twice:#}");
        let stale = copy("no such text", None).unwrap_err();
        assert!(format!("{stale:#}").contains("occurs 0 times"), "{stale:#}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
