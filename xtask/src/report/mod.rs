//! The grading report: one model (a chapter's `Report` and its check results, a class run's
//! `GradeReport`, chapter statuses, schemas) and every rendering of it for learners, instructors
//! and tools (text, JSON, JUnit, GitHub Classroom), in the learner's language (see `crate::lang`).

pub mod book_lang;
pub mod chapter_status;
pub mod formats;
pub mod grade_text;
pub mod model;
pub mod text;
pub mod xml;
