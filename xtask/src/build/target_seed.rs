//! A new cargo target folder, seeded with the registry dependencies another one has built.
//!
//! `verify`'s second lane and every class slot build in a target folder of their own (cargo
//! locks a folder for a whole build). On a fresh clone each of them would compile every
//! dependency again: tokio, proptest, mockall, SQLite's C code. A copy of what the workbook's
//! own folder holds is as good: a registry package's build depends on neither folder (cargo
//! names its files by a hash of the package, its features and the compiler, and moves a build
//! script's output folder along), so cargo finds the copied builds fresh and compiles only the
//! crates of the workbook. A unit missing from the copy is simply built.
//!
//! Files are copied, never linked: cargo rewrites some of them in place.

use std::collections::HashSet;
use std::path::Path;

use anyhow::{Context, Result};
use toml::Value;

use crate::curriculum::workbook::{Chapter, Workbook};

/// The build profile the grader uses.
const PROFILE: &str = "debug";

/// Copies into the target folder `to`, when cargo has not built there yet, every build the
/// workbook's own target folder holds of a registry package that the crates of `chapters` (the
/// exercises and the solutions) or the checks depend on, directly or not: its fingerprint, its
/// files in `deps/` and its build script's folders. Returns how many builds it copied (none when
/// `to` was already in use or the workbook's folder has none).
pub fn seed<'a>(
    workbook: &Workbook,
    chapters: impl IntoIterator<Item = &'a Chapter>,
    to: &Path,
) -> Result<usize> {
    let roots: Vec<String> = CHECKS_DEPENDENCIES
        .iter()
        .map(|name| (*name).to_owned())
        .chain(
            chapters
                .into_iter()
                .flat_map(|chapter| [chapter.crate_name(), chapter.solution_crate_name()]),
        )
        .collect();
    seed_from(
        &workbook.target_dir(),
        to,
        &workbook.root.join("Cargo.lock"),
        &roots,
    )
}

/// What every harness links besides the graded crate (`harness_dependencies` adds them).
const CHECKS_DEPENDENCIES: [&str; 2] = ["tokio", "rand"];

/// [`seed`] from the target folder `from`, for the packages named `roots` in `lockfile`.
fn seed_from(from: &Path, to: &Path, lockfile: &Path, roots: &[String]) -> Result<usize> {
    let (from, to) = (from.join(PROFILE), to.join(PROFILE));
    if to.exists() || !from.join(".fingerprint").is_dir() {
        return Ok(0);
    }
    let registry = registry_packages(lockfile, roots)?;
    let units: Vec<(String, String)> = entries(&from.join(".fingerprint"))?
        .into_iter()
        .filter_map(|name| {
            let (package, hash) = split_hash(&name)?;
            registry
                .contains(package)
                .then(|| (name.clone(), hash.to_owned()))
        })
        .collect();
    if units.is_empty() {
        return Ok(0);
    }
    // Built beside the folder and renamed into place, so an interrupted copy is never taken
    // for a finished one, and of two seeders at once the second finds the folder taken.
    let staging = to.with_file_name(format!("{PROFILE}.seeding-{}", std::process::id()));
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("clearing {}", staging.display()))?;
    }
    let hashes: HashSet<&str> = units.iter().map(|(_, hash)| hash.as_str()).collect();
    for (name, _) in &units {
        crate::util::copy_tree(
            &from.join(".fingerprint").join(name),
            &staging.join(".fingerprint").join(name),
            &[],
        )?;
        let build = from.join("build").join(name);
        if build.is_dir() {
            crate::util::copy_tree(&build, &staging.join("build").join(name), &[])?;
        }
    }
    std::fs::create_dir_all(staging.join("deps"))?;
    for file in entries(&from.join("deps"))? {
        let stem = file.split('.').next().unwrap_or_default();
        let Some((_, hash)) = split_hash(stem) else {
            continue;
        };
        let path = from.join("deps").join(&file);
        if hashes.contains(hash) && path.is_file() {
            let copy = staging.join("deps").join(&file);
            std::fs::copy(&path, &copy)
                .with_context(|| format!("copying {} to {}", path.display(), copy.display()))?;
        }
    }
    if let Err(error) = std::fs::rename(&staging, &to) {
        let _ = std::fs::remove_dir_all(&staging);
        if to.exists() {
            return Ok(0);
        }
        return Err(error)
            .with_context(|| format!("moving {} to {}", staging.display(), to.display()));
    }
    Ok(units.len())
}

/// The registry packages in `lockfile` that the packages named `roots` are or depend on,
/// directly or not.
fn registry_packages(lockfile: &Path, roots: &[String]) -> Result<HashSet<String>> {
    let text = std::fs::read_to_string(lockfile)
        .with_context(|| format!("reading {}", lockfile.display()))?;
    let lock: Value =
        toml::from_str(&text).with_context(|| format!("reading {}", lockfile.display()))?;
    let packages = lock
        .get("package")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut pending: Vec<String> = roots.to_vec();
    let mut reached: HashSet<String> = HashSet::new();
    while let Some(name) = pending.pop() {
        if reached.insert(name.clone()) {
            for package in packages
                .iter()
                .filter(|package| name_of(package) == Some(&name))
            {
                pending.extend(dependencies_of(package));
            }
        }
    }
    Ok(packages
        .iter()
        .filter(|package| {
            source_of(package).is_some_and(|source| {
                source.starts_with("registry+") || source.starts_with("sparse+")
            })
        })
        .filter_map(name_of)
        .filter(|name| reached.contains(*name))
        .map(str::to_owned)
        .collect())
}

fn name_of(package: &Value) -> Option<&str> {
    package.get("name").and_then(Value::as_str)
}

fn source_of(package: &Value) -> Option<&str> {
    package.get("source").and_then(Value::as_str)
}

/// The names a lockfile package depends on: an entry is "name", or "name version" where the
/// lockfile holds two versions.
fn dependencies_of(package: &Value) -> Vec<String> {
    package
        .get("dependencies")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .filter_map(|entry| entry.split(' ').next())
        .map(str::to_owned)
        .collect()
}

/// `name-0123456789abcdef` as `("name", "0123456789abcdef")`: cargo's names for a unit's
/// folders and files.
fn split_hash(name: &str) -> Option<(&str, &str)> {
    let (package, hash) = name.rsplit_once('-')?;
    let is_hash = hash.len() == 16 && hash.bytes().all(|byte| byte.is_ascii_hexdigit());
    is_hash.then_some((package, hash))
}

/// The names in folder `dir` (none when it does not exist).
fn entries(dir: &Path) -> Result<Vec<String>> {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for entry in listing {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGISTRY: &str = "source = \"registry+https://github.com/rust-lang/crates.io-index\"";

    /// Writes `text` to `dir/debug/<path>`, making the folders on the way.
    fn write(dir: &Path, path: &str, text: &str) {
        let file = dir.join(PROFILE).join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }

    fn read(dir: &Path, path: &str) -> Option<String> {
        std::fs::read_to_string(dir.join(PROFILE).join(path)).ok()
    }

    #[test]
    fn the_chapters_registry_dependencies_are_copied_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("workbook-seed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // The chapter's crate needs tokio, which needs pin-project-lite; the grader needs clap.
        let lockfile = dir.join("Cargo.lock");
        let package = |name: &str, source: &str, dependencies: &str| {
            format!(
                "[[package]]\nname = \"{name}\"\nversion = \"1.0.0\"\n{source}\n\
                 dependencies = [{dependencies}]\n\n"
            )
        };
        let lock = [
            package("ch08_full_jitter", "", "\"tokio\""),
            package("tokio", REGISTRY, "\"pin-project-lite\""),
            package("pin-project-lite", REGISTRY, ""),
            package("xtask", "", "\"clap 4.0.0\""),
            package("clap", REGISTRY, ""),
        ];
        std::fs::write(&lockfile, format!("version = 4\n\n{}", lock.concat())).unwrap();

        let (from, to) = (dir.join("from"), dir.join("to"));
        let copied = [
            ".fingerprint/tokio-00112233aabbccdd/lib-tokio",
            "build/tokio-00112233aabbccdd/out/generated.rs",
            "deps/libtokio-00112233aabbccdd.rlib",
            "deps/tokio-00112233aabbccdd.d",
            ".fingerprint/pin-project-lite-0000000000000001/lib-pin",
        ];
        let left_out = [
            ".fingerprint/clap-0000000000000002/lib-clap",
            "deps/libclap-0000000000000002.rlib",
            ".fingerprint/ch08_full_jitter-0123456789abcdef/lib-x",
            "deps/libch08_full_jitter-0123456789abcdef.rlib",
        ];
        for path in copied.iter().chain(&left_out) {
            write(&from, path, path);
        }

        let roots = ["ch08_full_jitter".to_owned()];
        assert_eq!(seed_from(&from, &to, &lockfile, &roots).unwrap(), 2);
        for path in copied {
            assert_eq!(
                read(&to, path).as_deref(),
                Some(path),
                "{path} was not copied"
            );
        }
        for path in left_out {
            assert_eq!(read(&to, path), None, "{path} was copied");
        }
        let leftovers = entries(&to).unwrap();
        assert_eq!(
            leftovers,
            [PROFILE],
            "the staging folder is left in {}",
            to.display()
        );

        // A folder cargo already builds in is left as it is.
        write(&from, "deps/libtokio-ffffffffffffffff.rlib", "10");
        assert_eq!(seed_from(&from, &to, &lockfile, &roots).unwrap(), 0);
        assert_eq!(read(&to, "deps/libtokio-ffffffffffffffff.rlib"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
