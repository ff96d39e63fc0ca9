//! Who is in the class: every subfolder of a folder of copies (as GitHub Classroom's assistant
//! clones them), or the lines of a roster file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::class::time;

/// One student of the class.
#[derive(Debug, Clone)]
pub struct Student {
    /// How the gradebook names the student: the folder's name, or the roster's first column.
    pub name: String,
    /// The student's copy of the workbook; `None` when it is not there (a missing submission).
    pub copy: Option<PathBuf>,
    /// The student's own deadline (an extension), overriding `--due`.
    pub due: Option<i64>,
}

/// Every subfolder of `dir` (hidden ones left out), sorted by name.
pub fn from_folder(dir: &Path) -> Result<Vec<Student>> {
    let mut students = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if path.is_dir() && !name.starts_with('.') {
            students.push(Student {
                name,
                copy: Some(path),
                due: None,
            });
        }
    }
    students.sort_by(|a, b| a.name.cmp(&b.name));
    check_names(&students)?;
    Ok(students)
}

/// A roster: one student a line, `name,folder[,due]`, the folder relative to the roster file.
/// A line with a name alone, or a folder that does not exist, is a missing submission. Blank
/// lines, `#` comments and a header line starting `student,` are skipped.
pub fn from_roster(file: &Path) -> Result<Vec<Student>> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let base = file.parent().unwrap_or(Path::new("."));
    let mut students = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("student,") {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let where_ = || format!("{}:{}", file.display(), number + 1);
        if fields[0].is_empty() || fields.len() > 3 {
            bail!("{}: expected `name,folder[,due]`", where_());
        }
        let copy = fields
            .get(1)
            .filter(|folder| !folder.is_empty())
            .map(|folder| base.join(folder))
            .filter(|folder| folder.is_dir());
        let due = match fields.get(2).filter(|due| !due.is_empty()) {
            Some(due) => Some(time::parse(due).with_context(where_)?),
            None => None,
        };
        students.push(Student {
            name: fields[0].to_owned(),
            copy,
            due,
        });
    }
    check_names(&students)?;
    Ok(students)
}

/// Shard `spec` (`K/N`, K from 1 to N) of the class: every N-th student from the K-th, so each
/// of N runners grades its own share.
pub fn shard(students: Vec<Student>, spec: &str) -> Result<Vec<Student>> {
    let parsed = spec
        .split_once('/')
        .and_then(|(k, n)| {
            Some((
                k.trim().parse::<usize>().ok()?,
                n.trim().parse::<usize>().ok()?,
            ))
        })
        .filter(|&(k, n)| k >= 1 && k <= n);
    let Some((k, n)) = parsed else {
        bail!("--shard {spec}: expected K/N with 1 ≤ K ≤ N, e.g. 2/4");
    };
    Ok(students
        .into_iter()
        .enumerate()
        .filter(|(index, _)| index % n == k - 1)
        .map(|(_, student)| student)
        .collect())
}

/// The file name a student's results are kept under: the name with anything but letters,
/// digits and `.-_@+` replaced.
pub fn file_stem(name: &str) -> String {
    let stem: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.@+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    stem.trim_start_matches('.').to_owned()
}

/// Two students whose results would share a file is an error.
fn check_names(students: &[Student]) -> Result<()> {
    let mut seen = BTreeSet::new();
    for student in students {
        let stem = file_stem(&student.name);
        if stem.is_empty() || !seen.insert(stem.clone()) {
            bail!(
                "two students (or an unusable name) share the result file `{stem}`: `{}`",
                student.name
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(names: &[&str]) -> Vec<Student> {
        names
            .iter()
            .map(|name| Student {
                name: (*name).to_owned(),
                copy: None,
                due: None,
            })
            .collect()
    }

    #[test]
    fn shards_cover_the_class_once() {
        let class = named(&["a", "b", "c", "d", "e"]);
        let mut seen: Vec<String> = (1..=3)
            .flat_map(|k| shard(class.clone(), &format!("{k}/3")).unwrap())
            .map(|s| s.name)
            .collect();
        seen.sort();
        assert_eq!(seen, ["a", "b", "c", "d", "e"]);
        assert!(shard(class, "0/3").is_err());
    }

    #[test]
    fn names_become_safe_file_stems() {
        assert_eq!(file_stem("ana maría/../x"), "ana_mar_a_.._x");
        assert!(check_names(&named(&["a b", "a_b"])).is_err());
    }
}
