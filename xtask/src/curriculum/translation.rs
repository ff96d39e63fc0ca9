//! A rubric's words in another language: `<lang>.toml` beside `chapter.toml` (today `ja.toml`)
//! holds the hints, in the same order and number as the English ones, and each check's rule
//! (`[titles]`, by check id). In a learner-tests chapter the rules are the mutants'
//! descriptions: `[titles]` gives each `kills.<mutant>` check its mutant's description (the
//! grader puts it in "catches a hidden bug: …" and in the survivor's message), and `[rewrites]`
//! each rewrite's description, by the rewrite file's stem. The grader shows them to a learner of
//! that language; whatever a file lacks stays English. `verify` checks that a file that exists
//! covers its rubric exactly.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::curriculum::workbook::{Chapter, Rubric, Workbook};
use crate::lang::Lang;
use crate::lang::words::{Key, fill};

/// One `<lang>.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Translation {
    /// The hints, one per English hint, in its order.
    #[serde(default)]
    pub hints: Vec<String>,
    /// Each check's rule, by check id (a mutant's description for a `kills.` check).
    #[serde(default)]
    pub titles: BTreeMap<String, String>,
    /// Each rewrite's description, by the stem of its file (learner-tests chapters).
    #[serde(default)]
    pub rewrites: BTreeMap<String, String>,
}

/// The translation file of `lang` in a rubric folder; none for English.
pub fn file_name(lang: Lang) -> Option<String> {
    (lang != Lang::En).then(|| format!("{}.toml", lang.code()))
}

impl Translation {
    /// Reads `<dir>/<lang>.toml`: `None` when there is none (or the language is English).
    pub fn load(dir: &Path, lang: Lang) -> Result<Option<Self>> {
        let Some(name) = file_name(lang) else {
            return Ok(None);
        };
        let path = dir.join(name);
        if !path.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        toml::from_str(&text)
            .map(Some)
            .map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))
    }
}

/// The chapter's rubric (see [`Rubric::for_chapter`]) with its hints and rules in the learner's
/// language, where `<lang>.toml` has them.
pub fn learners_rubric(
    workbook: &Workbook,
    chapter: &Chapter,
    private: Option<&Path>,
) -> Result<Rubric> {
    let mut rubric = Rubric::for_chapter(workbook, chapter, private)?;
    apply(&mut rubric, crate::lang::current());
    Ok(rubric)
}

/// Puts `rubric`'s hints and rules into `lang` where its translation files have them: the hints
/// only when the file has exactly one per English hint, each rule by its id. A file that is
/// missing or does not parse leaves the English as it is (`verify` reports it).
pub fn apply(rubric: &mut Rubric, lang: Lang) {
    // A private rubric's own file first, then the public one it includes.
    let dirs = [Some(rubric.dir.clone()), rubric.public_dir.clone()];
    let mut hints_done = false;
    let derived = rubric.learner_tests.is_some();
    for dir in dirs.iter().flatten() {
        let Ok(Some(translation)) = Translation::load(dir, lang) else {
            continue;
        };
        if !hints_done && translation.hints.len() == rubric.hints.len() {
            rubric.hints = translation.hints;
            hints_done = true;
        }
        for check in &mut rubric.checks {
            if let Some(title) = translation.titles.get(&check.id)
                && !title.trim().is_empty()
            {
                check.title = if derived && check.id.starts_with(KILLS) {
                    fill(Key::CatchesHiddenBug.text(lang), &[title])
                } else {
                    title.clone()
                };
            }
        }
    }
}

/// The prefix of a learner-tests chapter's checks that are mutants' descriptions.
const KILLS: &str = "kills.";

/// A mutant's or a rewrite's description in `lang`, from the rubric's translation files: the
/// `kills.<name>` rule, else the `[rewrites]` entry `name`. `None` in English or when no file
/// has it.
pub fn description(rubric: &Rubric, lang: Lang, name: &str) -> Option<String> {
    let id = crate::curriculum::workbook::kill_check_id(name);
    [Some(&rubric.dir), rubric.public_dir.as_ref()]
        .into_iter()
        .flatten()
        .filter_map(|dir| Translation::load(dir, lang).ok().flatten())
        .find_map(|translation| {
            translation
                .titles
                .get(&id)
                .or_else(|| translation.rewrites.get(name))
                .filter(|text| !text.trim().is_empty())
                .cloned()
        })
}

/// The stems of a learner-tests rubric's rewrite files (`rewrite.toml` → `rewrite`).
fn rewrite_names(rubric: &Rubric) -> Vec<String> {
    rubric
        .learner_tests
        .iter()
        .flat_map(|spec| &spec.rewrites)
        .map(|file| file.strip_suffix(".toml").unwrap_or(file).to_owned())
        .collect()
}

/// The grader's Japanese, as ci's translations stage reports it: the catalogue of the CLI's words
/// (each key carries both languages, so a key cannot lack its Japanese; one left equal to its
/// English counts as untranslated) and every ready chapter's `ja.toml` (hints, each check's rule,
/// a learner-tests chapter's mutants and rewrites). Prints one line each; true when nothing lacks
/// its Japanese. A check's evidence message (the panic of a hidden check) stays English and is
/// not counted here.
pub fn grader_report(workbook: &Workbook) -> Result<bool> {
    use crate::lang::words::{Key, untranslated};
    let untranslated = untranslated();
    println!(
        "   grader: {} CLI texts in English and Japanese, {} untranslated{}",
        Key::ALL.len(),
        untranslated.len(),
        if untranslated.is_empty() {
            String::new()
        } else {
            format!(" ({untranslated:?})")
        }
    );
    let (mut complete, mut hints, mut rules) = (0, 0, 0);
    let mut problems = Vec::new();
    let ready: Vec<&Chapter> = workbook.ready_chapters().collect();
    for chapter in &ready {
        let rubric = Rubric::for_chapter(workbook, chapter, None)?;
        match coverage(&rubric.dir, &rubric, Lang::Ja) {
            Coverage::Complete => {
                complete += 1;
                hints += rubric.hints.len();
                rules += rubric.checks.len();
            }
            Coverage::Missing { .. } => problems.push(format!("{}: no ja.toml", chapter.id)),
            Coverage::Inconsistent(found) => {
                problems.push(format!("{}: ja.toml: {}", chapter.id, found.join("; ")));
            }
        }
    }
    println!(
        "   grader: {complete} of {} chapters' ja.toml complete ({hints} hints, {rules} rules)",
        ready.len()
    );
    for problem in &problems {
        println!("   grader: {problem}");
    }
    Ok(untranslated.is_empty() && problems.is_empty())
}

/// How far a chapter's translation covers its rubric.
#[derive(Debug, PartialEq, Eq)]
pub enum Coverage {
    /// There is no translation file: so many hints and rules show in English only.
    Missing { hints: usize, titles: usize },
    /// The file has exactly one hint per English hint and a rule for every check, no other.
    Complete,
    /// The file exists but does not match the rubric: each problem in words.
    Inconsistent(Vec<String>),
}

/// How `rubric`'s translation into `lang` in `dir` covers it. `rubric` holds the English hints
/// and every check id (for a learner-tests chapter, the checks derived from its mutants).
pub fn coverage(dir: &Path, rubric: &Rubric, lang: Lang) -> Coverage {
    let translation = match Translation::load(dir, lang) {
        Ok(Some(translation)) => translation,
        Ok(None) => {
            return Coverage::Missing {
                hints: rubric.hints.len(),
                titles: rubric.checks.len(),
            };
        }
        Err(error) => return Coverage::Inconsistent(vec![format!("{error:#}")]),
    };
    let mut problems = Vec::new();
    if translation.hints.len() != rubric.hints.len() {
        problems.push(format!(
            "{} hints for {} English ones",
            translation.hints.len(),
            rubric.hints.len()
        ));
    }
    if let Some(empty) = translation.hints.iter().position(|h| h.trim().is_empty()) {
        problems.push(format!("hint {} is empty", empty + 1));
    }
    let ids: BTreeSet<&str> = rubric.checks.iter().map(|c| c.id.as_str()).collect();
    // A learner-tests chapter's checks come from its mutants, whose descriptions are the rules:
    // each `kills.` check needs its description; the suite's own two rules are the catalogue's.
    let derived = rubric.learner_tests.is_some();
    let untitled: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| !derived || id.starts_with(KILLS))
        .filter(|id| {
            translation
                .titles
                .get(*id)
                .is_none_or(|title| title.trim().is_empty())
        })
        .collect();
    if !untitled.is_empty() {
        problems.push(format!("no rule for {}", untitled.join(", ")));
    }
    let unknown: Vec<&str> = translation
        .titles
        .keys()
        .map(String::as_str)
        .filter(|id| !ids.contains(id))
        .collect();
    if !unknown.is_empty() {
        problems.push(format!("rules for unknown checks {}", unknown.join(", ")));
    }
    let rewrites = rewrite_names(rubric);
    let undescribed: Vec<&str> = rewrites
        .iter()
        .map(String::as_str)
        .filter(|name| {
            translation
                .rewrites
                .get(*name)
                .is_none_or(|text| text.trim().is_empty())
        })
        .collect();
    if !undescribed.is_empty() {
        problems.push(format!(
            "no description for rewrite {}",
            undescribed.join(", ")
        ));
    }
    let unknown: Vec<&str> = translation
        .rewrites
        .keys()
        .map(String::as_str)
        .filter(|name| !rewrites.iter().any(|known| known == name))
        .collect();
    if !unknown.is_empty() {
        problems.push(format!(
            "descriptions for unknown rewrites {}",
            unknown.join(", ")
        ));
    }
    if problems.is_empty() {
        Coverage::Complete
    } else {
        Coverage::Inconsistent(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curriculum::workbook::CheckSpec;

    fn english(dir: &Path) -> Rubric {
        let check = |id: &str| CheckSpec {
            id: id.to_owned(),
            points: 1,
            title: format!("the rule of {id}"),
            section: None,
            timeout_ms: 2_000,
            memory_mb: 1_024,
        };
        Rubric {
            given: Vec::new(),
            check_dependencies: Vec::new(),
            hints: vec!["first".to_owned(), "second".to_owned()],
            checks: vec![check("calls.one"), check("calls.two")],
            include_public: false,
            learner_tests: None,
            dir: dir.to_path_buf(),
            public_dir: None,
        }
    }

    fn folder(name: &str, ja: Option<&str>) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("xtask-translation-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        if let Some(ja) = ja {
            std::fs::write(dir.join("ja.toml"), ja).unwrap();
        }
        dir
    }

    const COMPLETE: &str = r#"
hints = ["一つ目", "二つ目"]
[titles]
"calls.one" = "一つ目のルール"
"calls.two" = "二つ目のルール"
"#;

    #[test]
    fn a_complete_file_translates_every_hint_and_rule() {
        let dir = folder("complete", Some(COMPLETE));
        let mut rubric = english(&dir);
        assert_eq!(coverage(&dir, &rubric, Lang::Ja), Coverage::Complete);
        apply(&mut rubric, Lang::Ja);
        assert_eq!(rubric.hints, ["一つ目", "二つ目"]);
        assert_eq!(rubric.checks[1].title, "二つ目のルール");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn english_and_a_missing_file_change_nothing() {
        let dir = folder("missing", None);
        let mut rubric = english(&dir);
        apply(&mut rubric, Lang::Ja);
        assert_eq!(rubric.hints, ["first", "second"]);
        assert_eq!(
            coverage(&dir, &rubric, Lang::Ja),
            Coverage::Missing {
                hints: 2,
                titles: 2
            }
        );
        let dir_ja = folder("english", Some(COMPLETE));
        let mut rubric = english(&dir_ja);
        apply(&mut rubric, Lang::En);
        assert_eq!(rubric.checks[0].title, "the rule of calls.one");
        std::fs::remove_dir_all(dir).unwrap();
        std::fs::remove_dir_all(dir_ja).unwrap();
    }

    #[test]
    fn an_inconsistent_file_is_named_and_falls_back_where_it_must() {
        let text = r#"
hints = ["一つ目"]
[titles]
"calls.one" = "一つ目のルール"
"calls.three" = "ない"
"#;
        let dir = folder("inconsistent", Some(text));
        let mut rubric = english(&dir);
        let Coverage::Inconsistent(problems) = coverage(&dir, &rubric, Lang::Ja) else {
            panic!("an inconsistent file passed");
        };
        assert_eq!(
            problems,
            [
                "1 hints for 2 English ones",
                "no rule for calls.two",
                "rules for unknown checks calls.three"
            ]
        );
        apply(&mut rubric, Lang::Ja);
        assert_eq!(
            rubric.hints,
            ["first", "second"],
            "a short list is not used"
        );
        assert_eq!(rubric.checks[0].title, "一つ目のルール");
        assert_eq!(rubric.checks[1].title, "the rule of calls.two");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_learner_tests_chapter_needs_its_hints_only() {
        let dir = folder("suite", Some("hints = [\"一つ目\", \"二つ目\"]\n"));
        let mut rubric = english(&dir);
        rubric.learner_tests = Some(crate::curriculum::workbook::LearnerTests {
            under_test: Vec::new(),
            max_suite_ms: 1_000,
            suite: "src/suite.rs".to_owned(),
            rewrites: Vec::new(),
        });
        assert_eq!(coverage(&dir, &rubric, Lang::Ja), Coverage::Complete);
        std::fs::write(
            dir.join("ja.toml"),
            "hints = [\"一つ目\", \"二つ目\"]\n[titles]\n\"kills.gone\" = \"ない\"\n",
        )
        .unwrap();
        assert!(matches!(
            coverage(&dir, &rubric, Lang::Ja),
            Coverage::Inconsistent(_)
        ));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_learner_tests_chapter_describes_every_mutant_and_rewrite() {
        let dir = folder("kills", None);
        let mut rubric = english(&dir);
        rubric.checks[1].id = "kills.no_jitter".to_owned();
        rubric.learner_tests = Some(crate::curriculum::workbook::LearnerTests {
            under_test: Vec::new(),
            max_suite_ms: 1_000,
            suite: "src/suite.rs".to_owned(),
            rewrites: vec!["rewrite.toml".to_owned()],
        });
        let hints = "hints = [\"一つ目\", \"二つ目\"]\n";
        std::fs::write(dir.join("ja.toml"), hints).unwrap();
        let Coverage::Inconsistent(problems) = coverage(&dir, &rubric, Lang::Ja) else {
            panic!("a mutant without its description passed");
        };
        assert_eq!(
            problems,
            [
                "no rule for kills.no_jitter",
                "no description for rewrite rewrite"
            ]
        );
        let complete = format!(
            "{hints}[titles]\n\"kills.no_jitter\" = \"ジッターなし。\"\n\
             [rewrites]\nrewrite = \"書き換え\"\n"
        );
        std::fs::write(dir.join("ja.toml"), complete).unwrap();
        assert_eq!(coverage(&dir, &rubric, Lang::Ja), Coverage::Complete);
        // The rule is the catalogue's "catches a hidden bug" around the description.
        apply(&mut rubric, Lang::Ja);
        assert_eq!(
            rubric.checks[1].title,
            "隠れたバグを見つける: ジッターなし。"
        );
        assert_eq!(rubric.checks[0].title, "the rule of calls.one");
        assert_eq!(
            description(&rubric, Lang::Ja, "no_jitter").as_deref(),
            Some("ジッターなし。")
        );
        assert_eq!(
            description(&rubric, Lang::Ja, "rewrite").as_deref(),
            Some("書き換え")
        );
        assert_eq!(description(&rubric, Lang::En, "no_jitter"), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_file_that_does_not_parse_is_inconsistent() {
        let dir = folder("broken", Some("hints = [\n"));
        let rubric = english(&dir);
        assert!(matches!(
            coverage(&dir, &rubric, Lang::Ja),
            Coverage::Inconsistent(_)
        ));
        let dir2 = folder("unknown-key", Some("hint = []\n"));
        assert!(matches!(
            coverage(&dir2, &rubric, Lang::Ja),
            Coverage::Inconsistent(_)
        ));
        std::fs::remove_dir_all(dir).unwrap();
        std::fs::remove_dir_all(dir2).unwrap();
    }
}
