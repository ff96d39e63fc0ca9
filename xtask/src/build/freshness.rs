//! Whether a harness must be handed to cargo at all. After a build, a stamp beside the harness
//! records everything its test binary was built from: the text of every file rustc read for the
//! local crates (their dep-info), every manifest and cargo configuration that could change a
//! build, the environment cargo and rustc read, the toolchain's binaries, and the binary itself.
//! When all of that is byte-for-byte the same, the binary is the one cargo would build, and the
//! grader runs it without asking cargo (a no-op cargo costs about 25 ms of CPU and two
//! processes). Anything it cannot vouch for (no absolute `CARGO`, a build script, a file rustc
//! read that the record does not hold) means no stamp, and cargo runs as before.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use anyhow::{Context, Result};

/// The stamp's file name inside the harness folder.
const STAMP: &str = "build.stamp";

/// The first line of a stamp; it changes when the layout does.
const HEADER: &str = "workbook-harness-stamp v1";

/// Ends the stamp's header lines; the recorded inputs follow, byte for byte.
const INPUTS_MARK: &str = "--inputs--";

/// The inputs of one build, read before cargo starts.
#[derive(Debug)]
pub struct Inputs {
    /// Every file read, with its text (or its absence).
    files: BTreeSet<PathBuf>,
    env_names: BTreeSet<String>,
    record: Vec<u8>,
    /// The part of the record that decides how cargo builds, not what rustc compiles: the
    /// toolchain, the environment, manifests, the lockfile and cargo's configuration.
    settings: Vec<u8>,
}

impl Inputs {
    /// A digest of everything but the sources: equal digests mean cargo would run rustc the
    /// same way, whatever the sources say.
    pub fn settings_digest(&self) -> String {
        format!(
            "{:016x}",
            crate::util::stable_hash(&String::from_utf8_lossy(&self.settings))
        )
    }
}

/// Files that change how cargo builds rather than what rustc compiles.
const SETTINGS_FILES: &[&str] = &["Cargo.toml", "Cargo.lock.source", "config", "config.toml"];

/// What a build produced that the next grading may reuse.
#[derive(Debug, Clone)]
pub struct Reusable {
    pub test_binary: PathBuf,
    pub tests: Vec<String>,
}

/// A stamp as read back.
struct Stamp {
    binary: PathBuf,
    binary_identity: String,
    tests: Vec<String>,
    /// Files and variables the last build depended on, to read again next time.
    files: Vec<PathBuf>,
    env_names: Vec<String>,
    record: Vec<u8>,
}

/// What cargo reported about the local crates it built (or found fresh).
#[derive(Debug, Default)]
pub struct LocalUnits {
    /// Dep-info files (`.d`) of the local crates' artifacts, each with the folder its relative
    /// paths start from (where cargo ran rustc).
    dep_info: Vec<(PathBuf, PathBuf)>,
    /// Manifests of the local packages.
    manifests: Vec<PathBuf>,
    /// True when something cannot be followed: a build script, an artifact without dep-info.
    unfollowable: bool,
}

impl LocalUnits {
    /// The one crate of a harness built without cargo: its manifest and its dep-info, whose
    /// relative paths start at `workspace_dir`.
    pub fn single(manifest: &Path, dep_info: PathBuf, workspace_dir: &Path) -> Self {
        Self {
            dep_info: vec![(dep_info, workspace_dir.to_path_buf())],
            manifests: vec![manifest.to_path_buf()],
            unfollowable: false,
        }
    }

    /// One `compiler-artifact` of a local package, built in the workspace at `workspace_dir`.
    pub fn add(
        &mut self,
        manifest: Option<&Path>,
        kinds: &[String],
        filenames: &[PathBuf],
        workspace_dir: &Path,
    ) {
        if kinds.iter().any(|kind| kind == "custom-build") {
            self.unfollowable = true;
        }
        match manifest {
            Some(manifest) => self.manifests.push(manifest.to_path_buf()),
            None => self.unfollowable = true,
        }
        match filenames.first().and_then(|file| dep_info_of(file)) {
            Some(dep_info) => self.dep_info.push((dep_info, workspace_dir.to_path_buf())),
            None => self.unfollowable = true,
        }
    }
}

/// The dep-info file rustc wrote beside an artifact: `deps/libname-hash.rlib` and
/// `deps/name-hash(.exe)` both have `deps/name-hash.d`.
pub fn dep_info_of(artifact: &Path) -> Option<PathBuf> {
    let dir = artifact.parent()?;
    let stem = artifact.file_stem()?.to_str()?;
    [Some(stem), stem.strip_prefix("lib")]
        .into_iter()
        .flatten()
        .map(|stem| dir.join(format!("{stem}.d")))
        .find(|candidate| candidate.is_file())
}

/// The test binary of the last build when nothing it was built from has changed since.
pub fn reusable(harness_dir: &Path, inputs: &Inputs) -> Option<Reusable> {
    let stamp = read_stamp(harness_dir)?;
    if stamp.record != inputs.record || binary_identity(&stamp.binary)? != stamp.binary_identity {
        return None;
    }
    Some(Reusable {
        test_binary: stamp.binary,
        tests: stamp.tests,
    })
}

/// Reads the inputs of a build of the harness at `harness_dir` grading the crate at
/// `graded_dir`, before cargo runs. `sources` are the folders and files the harness compiles
/// (checks, support, visible tests). None when the toolchain cannot be pinned down.
pub fn inputs(harness_dir: &Path, graded_dir: &Path, sources: &[PathBuf]) -> Option<Inputs> {
    let cargo = PathBuf::from(std::env::var_os("CARGO")?);
    if !cargo.is_absolute() {
        return None;
    }
    let previous = read_stamp(harness_dir);
    let files = input_files(harness_dir, graded_dir, sources, previous.as_ref());
    let mut env_names: BTreeSet<String> = std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| name.starts_with("CARGO") || name.starts_with("RUST") || name == "PATH")
        .collect();
    if let Some(previous) = &previous {
        env_names.extend(previous.env_names.iter().cloned());
    }
    let (record, settings) = record_inputs(&cargo, &files, &env_names);
    Some(Inputs {
        files,
        env_names,
        record,
        settings,
    })
}

/// Every file the build may read: the harness's own, the sources and the graded crate (walked),
/// the manifests and cargo configuration above them, and whatever the last stamp listed.
fn input_files(
    harness_dir: &Path,
    graded_dir: &Path,
    sources: &[PathBuf],
    previous: Option<&Stamp>,
) -> BTreeSet<PathBuf> {
    let mut files = BTreeSet::new();
    // The harness's Cargo.lock is cargo's trimmed copy of the workspace's, which
    // `Cargo.lock.source` holds as it was copied: that is the input.
    for file in ["Cargo.toml", "Cargo.lock.source", "checks.rs"] {
        files.insert(harness_dir.join(file));
    }
    for path in sources.iter().chain([&graded_dir.to_path_buf()]) {
        if path.is_dir() {
            let below = crate::util::files_under(path, &["target", ".git"]);
            files.extend(below.unwrap_or_default());
        } else {
            files.insert(path.clone());
        }
    }
    // Manifests and cargo configuration above the graded crate, the harness and the current
    // folder: workspace inheritance, profiles, `[build]` flags, `[env]`.
    let cwd = std::env::current_dir().ok();
    for start in [Some(graded_dir), Some(harness_dir), cwd.as_deref()]
        .into_iter()
        .flatten()
    {
        for dir in start.ancestors() {
            files.insert(dir.join("Cargo.toml"));
            files.insert(dir.join(".cargo/config.toml"));
            files.insert(dir.join(".cargo/config"));
        }
    }
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        let home = PathBuf::from(home);
        files.insert(home.join("config.toml"));
        files.insert(home.join("config"));
    }
    if let Some(previous) = previous {
        files.extend(previous.files.iter().cloned());
    }
    files
}

/// The record of the inputs (toolchain, environment, every file's text or absence) and the part
/// of it that is settings rather than sources.
fn record_inputs(
    cargo: &Path,
    files: &BTreeSet<PathBuf>,
    env_names: &BTreeSet<String>,
) -> (Vec<u8>, Vec<u8>) {
    let mut record = Vec::new();
    let mut settings = Vec::new();
    let toolchain_dir = cargo.parent().map(Path::to_path_buf).unwrap_or_default();
    for binary in [cargo.to_path_buf(), toolchain_dir.join("rustc")] {
        record.extend_from_slice(
            format!(
                "toolchain {} {}\n",
                binary.display(),
                binary_identity(&binary).unwrap_or_default()
            )
            .as_bytes(),
        );
    }
    for name in env_names {
        let value = std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
        record.extend_from_slice(format!("env {name}={value:?}\n").as_bytes());
    }
    settings.extend_from_slice(&record);
    for file in files {
        let start = record.len();
        match std::fs::read(file) {
            Ok(bytes) => {
                record.extend_from_slice(
                    format!("file {} {}\n", file.display(), bytes.len()).as_bytes(),
                );
                record.extend_from_slice(&bytes);
                record.push(b'\n');
            }
            Err(_) => {
                record.extend_from_slice(format!("absent {}\n", file.display()).as_bytes());
            }
        }
        let is_setting = file
            .file_name()
            .is_some_and(|name| SETTINGS_FILES.iter().any(|setting| name == *setting));
        if is_setting {
            settings.extend_from_slice(&record[start..]);
        }
    }
    (record, settings)
}

/// The last recorded build's list of tests, when no file under `test_sources` (the checks, the
/// support file, the visible tests: what names the tests) changed since: a build from the same
/// test files holds the same tests, so the new binary need not be asked for them.
pub fn tests_if_unchanged(
    harness_dir: &Path,
    inputs: &Inputs,
    test_sources: &[PathBuf],
) -> Option<Vec<String>> {
    let stamp = read_stamp(harness_dir)?;
    let naming_tests = |record| -> Vec<(PathBuf, &[u8])> {
        recorded_files(record)
            .into_iter()
            .filter(|(file, _)| test_sources.iter().any(|source| file.starts_with(source)))
            .collect()
    };
    let before = naming_tests(&stamp.record);
    (!before.is_empty() && before == naming_tests(&inputs.record)).then_some(stamp.tests)
}

/// Gives the current time to every file whose text changed since the last recorded build but
/// whose modification time is not later than that build: cargo goes by modification times and
/// would take it for unchanged, grading the last build's binary instead. Copies that keep a
/// file's old time (Finder, Explorer, `cp -p`, an archive unpacked) make such files. `inputs`
/// holds the texts as they are now, so no file is read again. Returns how many files it touched;
/// without a stamp there is nothing to compare, and nothing is touched.
pub fn renew_changed_files_that_look_old(harness_dir: &Path, inputs: &Inputs) -> usize {
    let Some(stamp) = read_stamp(harness_dir) else {
        return 0;
    };
    let Ok(built_at) = std::fs::metadata(harness_dir.join(STAMP)).and_then(|m| m.modified()) else {
        return 0;
    };
    let now_texts: std::collections::HashMap<PathBuf, &[u8]> =
        recorded_files(&inputs.record).into_iter().collect();
    let now = std::time::SystemTime::now();
    let mut renewed = 0;
    for (file, recorded) in recorded_files(&stamp.record) {
        let changed = now_texts.get(&file).is_some_and(|text| *text != recorded);
        let looks_old = || {
            std::fs::metadata(&file)
                .and_then(|meta| meta.modified())
                .is_ok_and(|modified| modified <= built_at)
        };
        if changed
            && looks_old()
            && std::fs::File::options()
                .write(true)
                .open(&file)
                .and_then(|handle| handle.set_modified(now))
                .is_ok()
        {
            renewed += 1;
        }
    }
    renewed
}

/// The files of a record with their recorded text (`file <path> <length>`, then the bytes).
fn recorded_files(record: &[u8]) -> Vec<(PathBuf, &[u8])> {
    let mut files = Vec::new();
    let mut rest = record;
    while let Some(end) = rest.iter().position(|&byte| byte == b'\n') {
        let line = String::from_utf8_lossy(&rest[..end]).into_owned();
        rest = &rest[end + 1..];
        let Some((path, length)) = line
            .strip_prefix("file ")
            .and_then(|entry| entry.rsplit_once(' '))
        else {
            continue;
        };
        let Some(length) = length.parse::<usize>().ok().filter(|&n| n <= rest.len()) else {
            break;
        };
        files.push((PathBuf::from(path), &rest[..length]));
        rest = rest.get(length + 1..).unwrap_or_default();
    }
    files
}

/// Removes the stamp: the binary is about to change.
pub fn forget(harness_dir: &Path) {
    let _ = std::fs::remove_file(harness_dir.join(STAMP));
}

/// Records a successful build made from `inputs`, when the record covers everything rustc
/// read for the local crates (as their dep-info lists it).
pub fn record(
    harness_dir: &Path,
    inputs: &Inputs,
    units: &LocalUnits,
    test_binary: &Path,
    tests: &[String],
) -> Result<()> {
    if units.unfollowable {
        return Ok(());
    }
    let mut needed_files = BTreeSet::new();
    let mut needed_env = BTreeSet::new();
    for (dep_info, base) in &units.dep_info {
        let Ok(text) = std::fs::read_to_string(dep_info) else {
            return Ok(());
        };
        let (files, env) = crate::build::dep_info::parse(&text);
        needed_files.extend(files.into_iter().map(|file| base.join(file)));
        needed_env.extend(env);
    }
    for manifest in &units.manifests {
        needed_files.extend(
            manifest
                .ancestors()
                .skip(1)
                .map(|dir| dir.join("Cargo.toml")),
        );
    }
    let covered = needed_files.iter().all(|file| inputs.files.contains(file))
        && needed_env
            .iter()
            .all(|name| inputs.env_names.contains(name));
    let Some(identity) = binary_identity(test_binary) else {
        return Ok(());
    };
    if !covered {
        return Ok(());
    }
    let mut stamp = Vec::new();
    let header = format!(
        "{HEADER}\nbinary {}\nidentity {identity}\ntests {}\nfiles {}\nenv {}\n{INPUTS_MARK}\n",
        test_binary.display(),
        tests.join("\t"),
        needed_files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join("\t"),
        needed_env.iter().cloned().collect::<Vec<_>>().join("\t"),
    );
    stamp.extend_from_slice(header.as_bytes());
    stamp.extend_from_slice(&inputs.record);
    // Written whole, then renamed, so a reader never sees half a stamp.
    let temporary = harness_dir.join(format!("{STAMP}.{}", std::process::id()));
    std::fs::write(&temporary, &stamp)
        .with_context(|| format!("writing {}", temporary.display()))?;
    std::fs::rename(&temporary, harness_dir.join(STAMP))
        .with_context(|| format!("writing the stamp in {}", harness_dir.display()))?;
    Ok(())
}

fn read_stamp(harness_dir: &Path) -> Option<Stamp> {
    let bytes = std::fs::read(harness_dir.join(STAMP)).ok()?;
    let mark = format!("\n{INPUTS_MARK}\n");
    let split = bytes
        .windows(mark.len())
        .position(|window| window == mark.as_bytes())?;
    let header = std::str::from_utf8(&bytes[..split]).ok()?;
    let record = bytes[split + mark.len()..].to_vec();
    let mut lines = header.lines();
    if lines.next()? != HEADER {
        return None;
    }
    let mut field = |name: &str| -> Option<String> {
        lines
            .next()?
            .strip_prefix(name)?
            .strip_prefix(' ')
            .map(str::to_owned)
    };
    let list = |text: String| -> Vec<String> {
        text.split('\t')
            .filter(|item| !item.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let binary = PathBuf::from(field("binary")?);
    let binary_identity = field("identity")?;
    let tests = list(field("tests")?);
    let files = list(field("files")?)
        .into_iter()
        .map(PathBuf::from)
        .collect();
    let env_names = list(field("env")?);
    Some(Stamp {
        binary,
        binary_identity,
        tests,
        files,
        env_names,
        record,
    })
}

/// Size and modification time of a file: a rebuilt or replaced binary differs in one of them.
fn binary_identity(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some(format!("{} {modified}", meta.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_that_looks_older_than_the_build_is_renewed() {
        let dir = std::env::temp_dir().join(format!("workbook-renew-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (changed, same) = (dir.join("lib.rs"), dir.join("stubs.rs"));
        let entry =
            |file: &Path, text: &str| format!("file {} {}\n{text}\n", file.display(), text.len());
        let mut record = String::new();
        for (file, text) in [(&changed, "fn old() {}\n"), (&same, "fn same() {}\n")] {
            std::fs::write(file, text).unwrap();
            record.push_str(&entry(file, text));
        }
        let header =
            format!("{HEADER}\nbinary /b\nidentity 1 1\ntests t\nfiles \nenv \n{INPUTS_MARK}\n");
        std::fs::write(dir.join(STAMP), header + &record).unwrap();
        // lib.rs goes back to another text with a time from long before the build.
        std::fs::write(&changed, "fn restored() {}\n").unwrap();
        let long_ago = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30);
        for file in [&changed, &same] {
            let handle = std::fs::File::options().write(true).open(file).unwrap();
            handle.set_modified(long_ago).unwrap();
        }
        let inputs = Inputs {
            files: BTreeSet::new(),
            env_names: BTreeSet::new(),
            record: [
                entry(&changed, "fn restored() {}\n"),
                entry(&same, "fn same() {}\n"),
            ]
            .concat()
            .into_bytes(),
            settings: Vec::new(),
        };
        let renewed = renew_changed_files_that_look_old(&dir, &inputs);
        let modified = |file: &Path| std::fs::metadata(file).unwrap().modified().unwrap();
        let (changed_at, same_at) = (modified(&changed), modified(&same));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(renewed, 1, "only the file whose text changed");
        assert!(
            changed_at > long_ago,
            "the changed file now looks newer than the build"
        );
        assert_eq!(same_at, long_ago, "an unchanged file keeps its time");
    }

    #[test]
    fn the_last_list_of_tests_stands_while_the_files_naming_tests_are_unchanged() {
        let dir = std::env::temp_dir().join(format!("workbook-tests-list-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (checks, learner) = (dir.join("checks/ch01/a.rs"), dir.join("copy/lib.rs"));
        let record = |checks_text: &str, learner_text: &str| -> Vec<u8> {
            [(&checks, checks_text), (&learner, learner_text)]
                .iter()
                .map(|(file, text)| format!("file {} {}\n{text}\n", file.display(), text.len()))
                .collect::<String>()
                .into_bytes()
        };
        let header = format!(
            "{HEADER}\nbinary /b\nidentity 1 1\ntests one\ttwo\nfiles \nenv \n{INPUTS_MARK}\n"
        );
        let mut stamp = header.into_bytes();
        stamp.extend(record("fn one() {}", "pub fn f() {}"));
        std::fs::write(dir.join(STAMP), stamp).unwrap();
        let inputs = |record| Inputs {
            files: BTreeSet::new(),
            env_names: BTreeSet::new(),
            record,
            settings: Vec::new(),
        };
        let sources = [dir.join("checks/ch01")];
        let after_learner_edit = tests_if_unchanged(
            &dir,
            &inputs(record("fn one() {}", "pub fn f() { 1; }")),
            &sources,
        );
        let after_checks_edit = tests_if_unchanged(
            &dir,
            &inputs(record("fn three() {}", "pub fn f() {}")),
            &sources,
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(after_learner_edit, Some(vec!["one".into(), "two".into()]));
        assert_eq!(
            after_checks_edit, None,
            "the checks changed: list the tests again"
        );
    }
}
