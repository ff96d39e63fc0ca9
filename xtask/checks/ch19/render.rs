//! The text rendering: exact layouts, compared line by line.

use exercise::Dashboard;

use super::fixture::{HOUR, MINUTE, SECOND};
use super::support::catch;

/// The learner's `render`, with a panic turned into a readable failure.
fn render(dashboard: &Dashboard) -> String {
    catch(|| exercise::render(dashboard))
        .unwrap_or_else(|message| panic!("render({dashboard:?}) panicked: {message}"))
}

/// Fails with the first line that differs, both texts shown whole.
fn assert_text(what: &str, dashboard: &Dashboard, expected: &str, rule: &str) {
    let got = render(dashboard);
    if got == expected {
        return;
    }
    let got_lines: Vec<&str> = got.split('\n').collect();
    let expected_lines: Vec<&str> = expected.split('\n').collect();
    let line = (0..got_lines.len().max(expected_lines.len()))
        .find(|&i| got_lines.get(i) != expected_lines.get(i))
        .unwrap_or(0);
    let quote = |lines: &[&str]| {
        lines
            .get(line)
            .map_or("(no such line)".to_owned(), |text| format!("{text:?}"))
    };
    let rule = advice(line, expected_lines.get(line), got_lines.get(line)).unwrap_or(rule);
    panic!(
        "{what}: render differs from the layout at line {}:\n  expected {}\n  yours    {}\n{rule}\n\
         Expected, whole (every line ends in \\n):\n{}\nYours:\n{}",
        line + 1,
        quote(&expected_lines),
        quote(&got_lines),
        show_block(expected),
        show_block(&got),
    );
}

/// The rule that the first differing line (0-based `line`) breaks, judged from the two lines
/// themselves; `None` when the caller's own rule says it best.
fn advice(line: usize, expected: Option<&&str>, got: Option<&&str>) -> Option<&'static str> {
    let (expected, got) = (expected.copied().unwrap_or(""), got.copied().unwrap_or(""));
    // A histogram line: `{attempts:>4} | {bar} {rows}`; its attempts, bar length and rows.
    let parts = |text: &str| {
        let (attempts, rest) = text.split_once(" | ")?;
        let (bar, rows) = rest.rsplit_once(' ')?;
        Some((attempts.trim().to_owned(), bar.len(), rows.to_owned()))
    };
    if line < 5 {
        Some(
            "Labels are left-aligned in 20 columns and values right-aligned in 8 \
             (`format!(\"{label:<20}{value:>8}\")`); the age is `clock(age)`, or `-` when no \
             row is pending",
        )
    } else if line == 5 {
        Some("After the five figures comes the title line `pending rows by attempts`")
    } else if expected == "  (none)" || got == "  (none)" {
        Some("The histogram is the single line `  (none)` exactly when no row is pending")
    } else if got.is_empty() && !expected.is_empty() {
        Some("The histogram has one line per attempts value, however many there are")
    } else {
        match (parts(expected), parts(got)) {
            (Some((a, bar, rows)), Some((b, other, same)))
                if a == b && rows == same && bar != other =>
            {
                Some(
                    "A bar holds ceil(rows · 40 / largest rows) `#`s: the largest bucket gets \
                     40, and a bucket with any row at least 1 (in integers: (rows · 40 + \
                     largest − 1) / largest)",
                )
            }
            _ => Some(
                "Each histogram line is `{attempts:>4} | {bar} {rows}`, in the histogram's order",
            ),
        }
    }
}

/// A text block with its line ends made visible.
fn show_block(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| format!("  |{}", line.replace('\n', "⏎")))
        .collect::<Vec<_>>()
        .join("\n")
}

const LAYOUT: &str = "Labels are left-aligned in 20 columns and values right-aligned in 8 \
                      (`format!(\"{label:<20}{value:>8}\")`); each histogram line is \
                      `{attempts:>4} | {bar} {rows}`";

#[test]
fn matches_layout() {
    let documented = Dashboard {
        due_now: 12,
        waiting: 30,
        oldest_pending_age: Some(245 * SECOND),
        attempts: vec![(0, 40), (1, 20), (12, 1)],
        dead_letters: 3,
        dead_letters_last_hour: 1,
    };
    let documented_text = "\
due now                   12
waiting                   30
oldest pending      00:04:05
dead letters               3
dead letters (1 h)         1
pending rows by attempts
   0 | ######################################## 40
   1 | #################### 20
  12 | # 1
";
    assert_text(
        "the doc comment's dashboard",
        &documented,
        documented_text,
        LAYOUT,
    );
    let busy = Dashboard {
        due_now: 1_250,
        waiting: 98_765,
        oldest_pending_age: Some(27 * HOUR + 46 * MINUTE + 40 * SECOND + 999),
        attempts: vec![(2, 80), (5, 20), (123, 80)],
        dead_letters: 0,
        dead_letters_last_hour: 0,
    };
    let busy_text = "\
due now                 1250
waiting                98765
oldest pending      27:46:40
dead letters               0
dead letters (1 h)         0
pending rows by attempts
   2 | ######################################## 80
   5 | ########## 20
 123 | ######################################## 80
";
    assert_text("a busy dashboard", &busy, busy_text, LAYOUT);
    // A storm spread over 300 attempts values: one line each, none left out or merged.
    let spread = Dashboard {
        attempts: (0..300)
            .map(|attempts| (attempts, 300 - i64::from(attempts)))
            .collect(),
        ..busy
    };
    let mut spread_text = busy_text.split_inclusive('\n').take(6).collect::<String>();
    for attempts in 0..300u32 {
        let rows = 300 - i64::from(attempts);
        let bar = "#".repeat(((rows * 40 + 299) / 300) as usize);
        spread_text.push_str(&format!("{attempts:>4} | {bar} {rows}\n"));
    }
    assert_text(
        "a histogram of 300 attempts values",
        &spread,
        &spread_text,
        "The histogram has one line per attempts value, however many there are",
    );
}

#[test]
fn bars_scale_to_largest_bucket() {
    // (attempts, rows, the bar's length): ceil(rows · 40 / largest).
    let cases: [&[(u32, i64, usize)]; 4] = [
        &[(0, 1, 1), (1, 1_000, 40)],
        &[(3, 3, 18), (4, 7, 40)],
        &[(9, 2, 40)],
        // One pending row in all: the largest bucket, one row, still gets the full width.
        &[(1, 1, 40)],
    ];
    for buckets in cases {
        let dashboard = Dashboard {
            attempts: buckets.iter().map(|&(a, rows, _)| (a, rows)).collect(),
            ..Dashboard::default()
        };
        let mut expected = String::from(
            "due now                    0\n\
             waiting                    0\n\
             oldest pending             -\n\
             dead letters               0\n\
             dead letters (1 h)         0\n\
             pending rows by attempts\n",
        );
        for &(attempts, rows, length) in buckets {
            expected.push_str(&format!("{attempts:>4} | {} {rows}\n", "#".repeat(length)));
        }
        assert_text(
            &format!("a histogram {:?}", dashboard.attempts),
            &dashboard,
            &expected,
            "A bar holds ceil(rows · 40 / largest rows) `#`s: the largest bucket gets 40, and a \
             bucket with any row at least 1 (in integers: (rows · 40 + largest − 1) / largest)",
        );
    }
}

#[test]
fn empty_queue() {
    let expected = "\
due now                    0
waiting                    0
oldest pending             -
dead letters               0
dead letters (1 h)         0
pending rows by attempts
  (none)
";
    assert_text(
        "an empty dashboard (Dashboard::default())",
        &Dashboard::default(),
        expected,
        "With no pending row the age is `-` and the histogram is the single line `  (none)`",
    );
    let dead_only = Dashboard {
        dead_letters: 7,
        ..Dashboard::default()
    };
    let expected = expected.replace(
        "dead letters               0",
        "dead letters               7",
    );
    assert_text(
        "a queue with only dead letters",
        &dead_only,
        &expected,
        "With no pending row the age is `-` and the histogram is the single line `  (none)`",
    );
}
