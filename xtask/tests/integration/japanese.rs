//! The grader speaks Japanese to a Japanese learner and instructor, through the real binary: the
//! progress lines a grading prints while it works, and the class report's page and lines.

use std::path::Path;
use std::process::{Output, Stdio};

use crate::common::{Scratch, copy_tree, root, xtask};

/// `cargo xtask <args>` in Japanese (`WORKBOOK_LANG=ja`, the locale variables removed), its
/// progress kept in `state`, stdout and stderr piped (so stderr is not a terminal).
fn xtask_ja(args: &[&str], state: &Path) -> Output {
    let mut command = xtask();
    command
        .args(args)
        .env("WORKBOOK_STATE_DIR", state)
        .env("WORKBOOK_LANG", "ja")
        .stdin(Stdio::null());
    for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
        command.env_remove(name);
    }
    command.output().expect("the xtask binary runs")
}

/// Words of the English status lines that must not reach a Japanese learner.
const ENGLISH_STATUS: [&str; 7] = [
    "Compiling",
    "Running",
    "running",
    "crates",
    "at most",
    "together",
    "at a time",
];

#[test]
fn the_progress_lines_of_a_grading_are_japanese() {
    // Chapter 1's rubric and one check more that outlasts its 1.5 s limit, so the grading stays
    // quiet long enough for plain progress lines, whatever the machine.
    let checks = Scratch::new("slow-checks");
    copy_tree(&root().join("xtask/checks/ch01"), &checks.join("ch01"));
    let rubric = checks.join("ch01/chapter.toml");
    let mut text = std::fs::read_to_string(&rubric).unwrap();
    text.push_str(
        "\n[[check]]\nid = \"slow.outlasts_its_limit\"\npoints = 1\n\
         title = \"a check that never ends in time\"\ntimeout-ms = 1500\n",
    );
    std::fs::write(&rubric, text).unwrap();
    std::fs::write(
        checks.join("ch01/slow.rs"),
        "//! A check that sleeps past its limit.\n\n#[test]\nfn outlasts_its_limit() {\n    \
         std::thread::sleep(std::time::Duration::from_secs(4));\n}\n",
    )
    .unwrap();
    let state = Scratch::new("progress");
    let output = xtask_ja(
        &["check", "ch01", "--checks-dir", checks.to_str().unwrap()],
        &state,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|line| !line.is_empty()).collect();
    assert!(
        lines.iter().any(|line| line.contains("実行しています")),
        "a progress line says in Japanese what runs: {stderr}"
    );
    assert!(
        lines.iter().any(|line| line.contains(" 秒")),
        "the time in Japanese: {stderr}"
    );
    for line in &lines {
        for english in ENGLISH_STATUS {
            assert!(!line.contains(english), "{english:?} in {line:?}");
        }
        assert!(!line.contains('\x1b'), "{line:?}");
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("ここから始めましょう"), "{stdout}");
}

#[test]
fn the_class_report_explains_itself_in_japanese() {
    // A report the learner's own copy of the grader made (so it is feedback, not a grade).
    let state = Scratch::new("class-state");
    let graded = xtask_ja(&["grade", "ch01", "--format", "json"], &state);
    assert!(!graded.stdout.is_empty(), "{graded:?}");
    let reports = Scratch::new("class-reports");
    std::fs::write(reports.join("hanako.json"), &graded.stdout).unwrap();
    let out = Scratch::new("class-out");
    let output = xtask_ja(
        &[
            "grade-class",
            "ch01",
            "--book-url",
            "https://example.org/retry-workbook",
            "--from-reports",
            reports.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &state,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{output:?}");
    for words in ["件の結果は信頼できません", "レポートは", "成績表: "] {
        assert!(stdout.contains(words), "{words}: {stdout}");
    }
    for english in ["untrusted", "Reports are in", "Gradebook", "Class report"] {
        assert!(!stdout.contains(english), "{english}: {stdout}");
    }
    let html = std::fs::read_to_string(out.join("class-report.html")).unwrap();
    for words in [
        "<html lang=\"ja\">",
        "クラスのレポート",
        "採点済みの学生を、章ごとの状態で数えます",
        "合格の少ないルールから順に並べています",
        "章ごとの重み付きの点数",
        "学生 1 人: 採点済み 1 人",
        "信頼できない",
        "<th>未着手</th>",
        "<th>コンパイル不可</th>",
        "合計点ごとの学生数",
        "学生自身の採点器のコピー",
        "https://example.org/retry-workbook/ja/ch01-strong-medicine.html#",
    ] {
        assert!(html.contains(words), "{words}");
    }
    for english in [
        "Graded students by their status",
        "Every check of every chapter",
        "weighted points",
        " students: ",
        "Made ",
        "not started",
        "does not compile",
        ">untrusted<",
        "points of the rubric",
        " of the students",
        "own copy of the grader",
    ] {
        assert!(!html.contains(english), "{english}");
    }
    // The gradebook is read by spreadsheets and scripts: its header and statuses stay English.
    let csv = std::fs::read_to_string(out.join("gradebook.csv")).unwrap();
    assert!(csv.starts_with("student,"), "{csv}");
    assert!(csv.contains("not started"), "{csv}");
}

#[test]
fn the_graders_own_errors_are_japanese() {
    let state = Scratch::new("errors");
    // A typo gets the nearest chapter, named with its Japanese title.
    let output = xtask_ja(&["check", "full-jiter"], &state);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("エラー: 章 `full-jiter` はありません。"),
        "{stderr}"
    );
    assert!(stderr.contains("ch08 · フルジッター"), "{stderr}");
    for english in [
        "error:",
        "there is no chapter",
        "did you mean",
        "Full jitter (",
    ] {
        assert!(!stderr.contains(english), "{english}: {stderr}");
    }
    // A name far from any: every chapter, each with its Japanese title.
    let output = xtask_ja(&["check", "banana"], &state);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ch01 · リトライは強い薬"), "{stderr}");
    assert!(!stderr.contains("Retries are strong medicine"), "{stderr}");
}

#[test]
fn a_learner_tests_chapter_states_its_rules_in_japanese() {
    // Chapter 14's rules are its mutants' descriptions: the untouched suite is empty, so every
    // row fails, each with its rule and the grader's verdict in Japanese.
    let state = Scratch::new("ch14");
    let output = xtask_ja(&["check", "ch14", "--verbose"], &state);
    let stdout = String::from_utf8_lossy(&output.stdout);
    for words in [
        "隠れたバグを見つける: 毎回ちょうど天井 min(cap, base·2^retry) だけスリープする。",
        "あなたのテストが正しいコードで合格する",
        "テストが 1 つも実行されませんでした",
        "数えていません: ",
        "（あなたのテスト）",
    ] {
        assert!(stdout.contains(words), "{words}: {stdout}");
    }
    for english in [
        "catches a hidden bug",
        "Sleeps exactly the ceiling",
        "no test ran",
        "not counted",
        "your tests",
    ] {
        assert!(!stdout.contains(english), "{english}: {stdout}");
    }
}

#[test]
fn the_instructors_grade_text_is_japanese() {
    // This workbook's own chapter 1, untouched: a table row that is not started, and the total.
    let state = Scratch::new("grade-text");
    let output = xtask_ja(&["grade", "ch01", "--format", "text"], &state);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(1),
        "ch01 fails: {stdout}{output:?}"
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].ends_with(" にあるコピーの成績"), "{stdout}");
    let table = &lines[2..5];
    assert!(table[0].starts_with("  章 "), "{stdout}");
    assert!(table[1].contains(" 未着手 "), "{stdout}");
    assert!(table[2].starts_with("  合計 "), "{stdout}");
    // The columns line up as a terminal shows them: a Japanese character is two columns wide.
    let width = crate::width::columns;
    assert!(
        table.iter().all(|line| width(line) == width(table[0])),
        "{stdout}"
    );
    for english in [
        "Grade of",
        "chapter",
        "status",
        "checks",
        "points",
        "total",
        "not started",
        " of ",
    ] {
        assert!(!stdout.contains(english), "{english}: {stdout}");
    }
}
