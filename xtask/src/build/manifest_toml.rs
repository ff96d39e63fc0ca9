//! Reading crate manifests (`Cargo.toml`) and writing stand-alone ones: the grader's generated
//! crates live outside the workspace, so every `workspace = true` must be spelled out.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use toml::{Table, Value};

/// Why the manifest at `path` is not TOML, in one line (`line 12: key with no value, expected
/// `=``); None when it parses, or cannot be read.
pub fn syntax_error(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let error = toml::from_str::<Table>(&text).err()?;
    let message = error.message().trim().replace('\n', " ");
    Some(match error.span() {
        Some(span) => format!(
            "line {}: {message}",
            text[..span.start.min(text.len())].matches('\n').count() + 1
        ),
        None => message,
    })
}

/// A parsed `Cargo.toml` and the folder it came from.
pub struct CrateManifest {
    pub dir: PathBuf,
    pub table: Table,
}

impl CrateManifest {
    pub fn read(dir: &Path) -> Result<Self> {
        let path = dir.join("Cargo.toml");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let table: Table = toml::from_str(&text)
            .map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            table,
        })
    }

    /// `[package].name`.
    pub fn package_name(&self) -> Result<String> {
        self.table
            .get("package")
            .and_then(|package| package.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .with_context(|| format!("{}/Cargo.toml has no [package] name", self.dir.display()))
    }

    /// `[package].edition`, read from the workspace when inherited; cargo's default is 2015.
    pub fn edition(&self) -> Result<String> {
        let edition = self
            .table
            .get("package")
            .and_then(|package| package.get("edition"));
        match edition {
            None => Ok("2015".to_owned()),
            Some(Value::String(edition)) => Ok(edition.clone()),
            Some(Value::Table(inherited))
                if inherited.get("workspace").and_then(Value::as_bool) == Some(true) =>
            {
                let root = enclosing_workspace(&self.dir)?;
                CrateManifest::read(&root)?
                    .table
                    .get("workspace")
                    .and_then(|workspace| workspace.get("package"))
                    .and_then(|package| package.get("edition"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .with_context(|| {
                        format!("{}/Cargo.toml has no workspace edition", root.display())
                    })
            }
            Some(other) => bail!(
                "{}/Cargo.toml: an edition of an unexpected form: {other}",
                self.dir.display()
            ),
        }
    }

    /// The dependencies of one table (`dependencies` or `dev-dependencies`), with every
    /// `workspace = true` and every relative path resolved, ready to copy into another manifest.
    pub fn resolved_dependencies(&self, section: &str) -> Result<Table> {
        let mut resolved = Table::new();
        let Some(Value::Table(dependencies)) = self.table.get(section) else {
            return Ok(resolved);
        };
        for (name, spec) in dependencies {
            resolved.insert(name.clone(), resolve_dependency(&self.dir, name, spec)?);
        }
        Ok(resolved)
    }
}

/// One dependency spec made stand-alone.
fn resolve_dependency(crate_dir: &Path, name: &str, spec: &Value) -> Result<Value> {
    let Value::Table(spec) = spec else {
        return Ok(spec.clone());
    };
    let mut spec = spec.clone();
    if spec.get("workspace").and_then(Value::as_bool) == Some(true) {
        spec.remove("workspace");
        let root = enclosing_workspace(crate_dir)?;
        let inherited = workspace_dependency(&root, name)?;
        let extra_features = spec.remove("features");
        let mut merged = match inherited {
            Value::String(version) => {
                Table::from_iter([("version".to_owned(), Value::String(version))])
            }
            Value::Table(table) => absolutize_path(&root, table),
            other => bail!("workspace dependency `{name}` has an unexpected form: {other}"),
        };
        if let Some(Value::Array(features)) = extra_features {
            let all = merged
                .entry("features")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(all) = all {
                all.extend(features);
            }
        }
        for (key, value) in spec {
            merged.insert(key, value);
        }
        return Ok(Value::Table(merged));
    }
    Ok(Value::Table(absolutize_path(crate_dir, spec)))
}

fn absolutize_path(base: &Path, mut spec: Table) -> Table {
    if let Some(Value::String(path)) = spec.get("path") {
        let absolute = base.join(path);
        spec.insert(
            "path".to_owned(),
            Value::String(absolute.display().to_string()),
        );
    }
    spec
}

/// The dependency `name` of the `[workspace.dependencies]` table at `root`.
pub fn workspace_dependency(root: &Path, name: &str) -> Result<Value> {
    let manifest = CrateManifest::read(root)?;
    manifest
        .table
        .get("workspace")
        .and_then(|workspace| workspace.get("dependencies"))
        .and_then(|dependencies| dependencies.get(name))
        .cloned()
        .with_context(|| {
            format!(
                "`{name}` is not in [workspace.dependencies] of {}/Cargo.toml",
                root.display()
            )
        })
}

/// The closest folder at or above `dir` whose Cargo.toml has a `[workspace]` table.
pub fn enclosing_workspace(dir: &Path) -> Result<PathBuf> {
    for candidate in dir.ancestors() {
        let manifest = candidate.join("Cargo.toml");
        if manifest.is_file() {
            let text = std::fs::read_to_string(&manifest)
                .with_context(|| format!("reading {}", manifest.display()))?;
            if let Ok(table) = toml::from_str::<Table>(&text)
                && table.contains_key("workspace")
            {
                return Ok(candidate.to_path_buf());
            }
        }
    }
    bail!("no workspace encloses {}", dir.display())
}

/// The `[profile]` tables of the workspace at `root`: generated crates copy them so that they
/// share the workspace's compiled dependencies.
pub fn workspace_profiles(root: &Path) -> Result<Option<Value>> {
    Ok(CrateManifest::read(root)?.table.get("profile").cloned())
}

/// The workspace's `[profile]` tables for a build of `packages`: the settings of a named
/// package are kept only when it is one of them (cargo warns about a name it does not build).
pub fn workspace_profiles_for(root: &Path, packages: &[&str]) -> Result<Option<Value>> {
    let mut profiles = workspace_profiles(root)?;
    if let Some(Value::Table(profiles)) = &mut profiles {
        for (_, profile) in profiles.iter_mut() {
            if let Some(Value::Table(named)) = profile
                .as_table_mut()
                .and_then(|profile| profile.get_mut("package"))
            {
                named.retain(|name, _| name == "*" || packages.contains(&name));
            }
        }
    }
    Ok(profiles)
}

/// `profiles` (a `[profile]` table, or none) with the settings of package `from` given to
/// package `to` instead, in every profile.
pub fn rename_profile_package(profiles: &mut Option<Value>, from: &str, to: &str) {
    let Some(Value::Table(profiles)) = profiles else {
        return;
    };
    for (_, profile) in profiles.iter_mut() {
        if let Some(Value::Table(named)) = profile
            .as_table_mut()
            .and_then(|profile| profile.get_mut("package"))
            && let Some(settings) = named.remove(from)
        {
            named.insert(to.to_owned(), settings);
        }
    }
}

/// `profiles` (a `[profile]` table, or none) with `packages` built without debug info (other
/// settings of theirs stay).
///
/// The grader's own binaries (check harnesses, the copies a learner's suite runs in) are relinked
/// after every change: without debug info rustc emits less and the linker copies less (a quarter
/// of a check harness's link). Panic locations do not need it, and backtraces are off in every
/// graded run. Only these packages change, so the shared dependencies keep their builds.
pub fn without_debug_info(profiles: Option<Value>, packages: &[&str]) -> Value {
    let mut profiles = match profiles {
        Some(Value::Table(profiles)) => profiles,
        _ => Table::new(),
    };
    let dev = profiles
        .entry("dev")
        .or_insert_with(|| Value::Table(Table::new()));
    if let Value::Table(dev) = dev {
        let named = dev
            .entry("package")
            .or_insert_with(|| Value::Table(Table::new()));
        if let Value::Table(named) = named {
            for package in packages {
                let settings = named
                    .entry((*package).to_owned())
                    .or_insert_with(|| Value::Table(Table::new()));
                if let Value::Table(settings) = settings {
                    settings.insert("debug".to_owned(), Value::Integer(0));
                    settings.insert("strip".to_owned(), Value::String("debuginfo".to_owned()));
                }
            }
        }
    }
    Value::Table(profiles)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workspace at a fresh folder with one member crate, `member/`.
    fn workspace(name: &str, root: &str, member: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("manifest-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("member")).unwrap();
        std::fs::write(dir.join("Cargo.toml"), root).unwrap();
        std::fs::write(dir.join("member/Cargo.toml"), member).unwrap();
        dir
    }

    #[test]
    fn inherited_dependencies_are_spelled_out_with_the_members_additions() {
        let dir = workspace(
            "inherit",
            "[workspace]\nmembers = [\"member\"]\n[workspace.dependencies]\n\
             tokio = { version = \"1\", features = [\"rt\"], default-features = false }\n\
             rand = \"0.9\"\nlocal = { path = \"crates/local\" }\n",
            "[package]\nname = \"member\"\n[dependencies]\n\
             tokio = { workspace = true, features = [\"time\"], optional = true }\n\
             rand.workspace = true\nlocal.workspace = true\nown = { path = \"../own\" }\n",
        );
        let deps = CrateManifest::read(&dir.join("member"))
            .unwrap()
            .resolved_dependencies("dependencies")
            .unwrap();
        let tokio = deps["tokio"].as_table().unwrap();
        assert_eq!(tokio["version"].as_str(), Some("1"));
        let features: Vec<&str> = tokio["features"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(
            features,
            ["rt", "time"],
            "the member's features add to the workspace's"
        );
        assert_eq!(tokio["default-features"].as_bool(), Some(false));
        assert_eq!(tokio["optional"].as_bool(), Some(true));
        assert!(tokio.get("workspace").is_none());
        assert_eq!(deps["rand"]["version"].as_str(), Some("0.9"));
        let local = deps["local"]["path"].as_str().unwrap();
        assert_eq!(
            Path::new(local),
            dir.join("crates/local"),
            "relative to the workspace"
        );
        let own = deps["own"]["path"].as_str().unwrap();
        assert_eq!(
            Path::new(own),
            dir.join("member/../own"),
            "relative to the member"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_dependency_missing_from_the_workspace_is_named() {
        let dir = workspace(
            "missing",
            "[workspace]\nmembers = [\"member\"]\n[workspace.dependencies]\n",
            "[package]\nname = \"member\"\n[dependencies]\nserde.workspace = true\n",
        );
        let error = CrateManifest::read(&dir.join("member"))
            .unwrap()
            .resolved_dependencies("dependencies")
            .unwrap_err();
        assert!(format!("{error:#}").contains("`serde` is not in [workspace.dependencies]"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn profiles_keep_only_the_settings_of_the_packages_built() {
        let dir = workspace(
            "profiles",
            "[workspace]\nmembers = [\"member\"]\n[profile.dev]\ndebug = 0\n\
             [profile.dev.package.\"*\"]\nopt-level = 1\n\
             [profile.dev.package.lab]\nopt-level = 3\n\
             [profile.dev.package.other]\nopt-level = 2\n",
            "[package]\nname = \"member\"\n",
        );
        let profiles = workspace_profiles_for(&dir, &["lab"]).unwrap().unwrap();
        let named = profiles["dev"]["package"].as_table().unwrap();
        let mut names: Vec<&str> = named.keys().map(String::as_str).collect();
        names.sort();
        assert_eq!(names, ["*", "lab"]);
        assert_eq!(profiles["dev"]["debug"].as_integer(), Some(0));

        // The grader's own packages are added without debug info; the rest stays as it was.
        let profiles = without_debug_info(Some(profiles), &["checks_lab"]);
        let named = profiles["dev"]["package"].as_table().unwrap();
        assert_eq!(named["lab"]["opt-level"].as_integer(), Some(3));
        assert_eq!(named["checks_lab"]["debug"].as_integer(), Some(0));
        assert_eq!(named["checks_lab"]["strip"].as_str(), Some("debuginfo"));
        let fresh = without_debug_info(None, &["copy_a"]);
        assert_eq!(
            fresh["dev"]["package"]["copy_a"]["debug"].as_integer(),
            Some(0)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
