//! One module per command; each has a `run` function.

pub mod bench;
pub mod book;
pub mod book_code;
pub mod book_i18n;
pub mod check;
pub mod ci;
pub mod figures;
pub mod grade;
pub mod grade_class;
pub mod hint;
pub mod list;
pub mod new;
pub mod preprocess;
pub mod reset;
pub mod solution;
pub mod sweep;
pub mod verify;
pub mod watch;
