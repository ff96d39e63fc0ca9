//! Where a student stands in one chapter — missing, not started, does not compile, partial or
//! done — and the rounding of the numbers the reports print.

use serde::{Deserialize, Serialize};

/// A student's status in one chapter. The order is the order of progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChapterStatus {
    /// The copy has no folder for the chapter.
    Missing,
    /// Every shipped file of the exercise is as shipped: the student has not begun.
    NotStarted,
    /// The student changed the exercise and it does not compile, so no check could run.
    DoesNotCompile,
    /// It compiles, and some check did not pass (or was skipped and earned nothing).
    Partial,
    /// It compiles and earns every point.
    Done,
}

impl ChapterStatus {
    /// Every status, in the order of progress.
    pub const ALL: [ChapterStatus; 5] = [
        ChapterStatus::Missing,
        ChapterStatus::NotStarted,
        ChapterStatus::DoesNotCompile,
        ChapterStatus::Partial,
        ChapterStatus::Done,
    ];

    /// The status of a graded chapter. `as_shipped` is whether every shipped file is unchanged;
    /// `failed` is whether any check failed (a skipped one did not fail, but its points may be
    /// missing from `score`).
    pub fn of(
        missing: bool,
        as_shipped: bool,
        compiled: bool,
        failed: bool,
        score: u32,
        max_score: u32,
    ) -> Self {
        if missing {
            ChapterStatus::Missing
        } else if as_shipped {
            ChapterStatus::NotStarted
        } else if !compiled {
            ChapterStatus::DoesNotCompile
        } else if failed || score < max_score {
            ChapterStatus::Partial
        } else {
            ChapterStatus::Done
        }
    }

    /// The status in the instructor's language, as the class report's page and lines and the
    /// `grade` text show it.
    pub fn label(self) -> &'static str {
        use crate::lang::words::{Key, t};
        t(match self {
            ChapterStatus::Missing => Key::StatusMissing,
            ChapterStatus::NotStarted => Key::NotStarted,
            ChapterStatus::DoesNotCompile => Key::StatusDoesNotCompile,
            ChapterStatus::Partial => Key::StatusPartial,
            ChapterStatus::Done => Key::StatusDone,
        })
    }

    /// The status in English words, as the gradebook's CSV (read by spreadsheets and scripts)
    /// shows it.
    pub fn words(self) -> &'static str {
        match self {
            ChapterStatus::Missing => "missing",
            ChapterStatus::NotStarted => "not started",
            ChapterStatus::DoesNotCompile => "does not compile",
            ChapterStatus::Partial => "partial",
            ChapterStatus::Done => "done",
        }
    }

    /// The JSON name (`not_started`), also a CSS class of the HTML report.
    pub fn id(self) -> &'static str {
        match self {
            ChapterStatus::Missing => "missing",
            ChapterStatus::NotStarted => "not_started",
            ChapterStatus::DoesNotCompile => "does_not_compile",
            ChapterStatus::Partial => "partial",
            ChapterStatus::Done => "done",
        }
    }

    /// Whether the student attempted the chapter and it compiled: only then do its checks say
    /// something about the rules it teaches.
    pub fn attempted(self) -> bool {
        matches!(self, ChapterStatus::Partial | ChapterStatus::Done)
    }
}

/// Points with two decimals, as every report prints them (`0.6`, never `0.6000000000000001`).
pub fn round_points(points: f64) -> f64 {
    (points * 100.0).round() / 100.0
}

/// A share (0 to 1) with four decimals: a percentage with two.
pub fn round_share(share: f64) -> f64 {
    (share * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_follows_the_copy_then_the_compile_then_the_score() {
        use ChapterStatus::*;
        // missing, as_shipped, compiled, failed, score, max.
        assert_eq!(ChapterStatus::of(true, false, false, true, 0, 12), Missing);
        assert_eq!(
            ChapterStatus::of(false, true, true, true, 0, 12),
            NotStarted
        );
        assert_eq!(
            ChapterStatus::of(false, true, false, true, 0, 12),
            NotStarted,
            "a shipped exercise that does not build here is still not started"
        );
        assert_eq!(
            ChapterStatus::of(false, false, false, true, 0, 12),
            DoesNotCompile
        );
        assert_eq!(ChapterStatus::of(false, false, true, true, 0, 12), Partial);
        assert_eq!(ChapterStatus::of(false, false, true, true, 9, 12), Partial);
        assert_eq!(
            ChapterStatus::of(false, false, true, false, 9, 12),
            Partial,
            "skipped checks that earned nothing leave it partial"
        );
        assert_eq!(ChapterStatus::of(false, false, true, false, 12, 12), Done);
        assert_eq!(
            ChapterStatus::of(false, false, true, false, 0, 0),
            Done,
            "every check excluded"
        );
        assert!(Partial.attempted() && Done.attempted());
        assert!(!Missing.attempted() && !NotStarted.attempted() && !DoesNotCompile.attempted());
    }

    #[test]
    fn statuses_serialize_as_their_ids() {
        for status in ChapterStatus::ALL {
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                serde_json::Value::from(status.id())
            );
        }
    }

    #[test]
    fn rounding_prints_short_decimals() {
        let sum = 0.1 + 0.2 + 0.3;
        assert_eq!(sum.to_string(), "0.6000000000000001");
        assert_eq!(serde_json::to_string(&round_points(sum)).unwrap(), "0.6");
        assert_eq!(round_points(2.0 / 3.0), 0.67);
        assert_eq!(round_points(7.0 / 12.0 * 3.0), 1.75);
        assert_eq!(
            serde_json::to_string(&round_share(1.0 / 3.0)).unwrap(),
            "0.3333"
        );
        assert_eq!(round_share(2.0 / 3.0), 0.6667);
        assert_eq!(round_share(1.0), 1.0);
    }
}
