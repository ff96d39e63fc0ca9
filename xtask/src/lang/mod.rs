//! The language the grader speaks to the learner and the instructor: English, or Japanese.
//! Chosen once per run, in this order: `--lang`, else `WORKBOOK_LANG`, else the locale
//! (`LC_ALL`, then `LC_MESSAGES`, then `LANG`) when it begins with `ja`; English otherwise.
//! Every word a learner or an instructor reads is a key of [`words`], in both languages.

pub mod width;
pub mod words;

use std::sync::OnceLock;

use clap::ValueEnum;

/// A language the grader speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ValueEnum)]
pub enum Lang {
    /// English.
    En,
    /// Japanese (日本語).
    Ja,
}

/// The variable that picks the grader's language when `--lang` is not given.
pub const LANG_VARIABLE: &str = "WORKBOOK_LANG";

/// The locale variables, in the order POSIX gives them precedence.
const LOCALE_VARIABLES: [&str; 3] = ["LC_ALL", "LC_MESSAGES", "LANG"];

static CHOSEN: OnceLock<Lang> = OnceLock::new();

/// Fixes the language for this run from the `--lang` flag (call once, right after the
/// arguments are read). Later calls change nothing.
pub fn set(flag: Option<Lang>) {
    CHOSEN.get_or_init(|| choose(flag, |name| std::env::var(name).ok()));
}

/// The language of this run: as [`set`] fixed it, else from the environment. Unit tests see
/// English whatever the machine's locale, or the language a test chose with [`speaking`].
pub fn current() -> Lang {
    #[cfg(test)]
    return TEST_LANG.with(std::cell::Cell::get);
    #[cfg(not(test))]
    *CHOSEN.get_or_init(|| choose(None, |name| std::env::var(name).ok()))
}

/// The language of a unit test's thread.
#[cfg(test)]
// Debian's clippy 1.96 (the cross-platform stage) asks for a const initialiser that is already
// there.
#[allow(clippy::missing_const_for_thread_local)]
mod test_lang {
    thread_local! {
        pub static TEST_LANG: std::cell::Cell<super::Lang> =
            const { std::cell::Cell::new(super::Lang::En) };
    }
}
#[cfg(test)]
use test_lang::TEST_LANG;

/// Runs `f` with the grader speaking `lang` on this thread (tests only).
#[cfg(test)]
pub fn speaking<T>(lang: Lang, f: impl FnOnce() -> T) -> T {
    let before = TEST_LANG.with(|chosen| chosen.replace(lang));
    let result = f();
    TEST_LANG.with(|chosen| chosen.set(before));
    result
}

/// The language the flag, then the variables (read by `var`) choose.
pub fn choose(flag: Option<Lang>, var: impl Fn(&str) -> Option<String>) -> Lang {
    if let Some(lang) = flag {
        return lang;
    }
    if let Some(value) = var(LANG_VARIABLE).filter(|value| !value.trim().is_empty()) {
        return of_name(&value);
    }
    // The first locale variable that is set and not empty decides, as in POSIX.
    LOCALE_VARIABLES
        .iter()
        .find_map(|name| var(name).filter(|value| !value.is_empty()))
        .map_or(Lang::En, |locale| of_name(&locale))
}

/// `ja`, `ja_JP.UTF-8`, `JA` → Japanese; anything else → English.
fn of_name(name: &str) -> Lang {
    if name.trim().to_ascii_lowercase().starts_with("ja") {
        Lang::Ja
    } else {
        Lang::En
    }
}

impl Lang {
    /// The code used in file names (`ja.toml`) and the book's folders (`book/build/ja`).
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ja => "ja",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn the_flag_wins_over_everything() {
        let all_ja = env(&[("WORKBOOK_LANG", "ja"), ("LANG", "ja_JP.UTF-8")]);
        assert_eq!(choose(Some(Lang::En), &all_ja), Lang::En);
        assert_eq!(choose(Some(Lang::Ja), env(&[])), Lang::Ja);
    }

    #[test]
    fn the_variable_wins_over_the_locale() {
        let vars = env(&[("WORKBOOK_LANG", "en"), ("LANG", "ja_JP.UTF-8")]);
        assert_eq!(choose(None, vars), Lang::En);
        let vars = env(&[("WORKBOOK_LANG", "ja"), ("LC_ALL", "C")]);
        assert_eq!(choose(None, vars), Lang::Ja);
        // An empty variable says nothing.
        let vars = env(&[("WORKBOOK_LANG", ""), ("LANG", "ja_JP.UTF-8")]);
        assert_eq!(choose(None, vars), Lang::Ja);
    }

    #[test]
    fn the_locale_decides_in_posix_order() {
        assert_eq!(choose(None, env(&[("LANG", "ja_JP.UTF-8")])), Lang::Ja);
        assert_eq!(choose(None, env(&[("LC_MESSAGES", "ja_JP")])), Lang::Ja);
        let vars = env(&[("LC_ALL", "en_US.UTF-8"), ("LANG", "ja_JP.UTF-8")]);
        assert_eq!(choose(None, vars), Lang::En);
        let vars = env(&[("LC_ALL", ""), ("LC_MESSAGES", "ja_JP"), ("LANG", "C")]);
        assert_eq!(choose(None, vars), Lang::Ja);
        assert_eq!(choose(None, env(&[("LANG", "C.UTF-8")])), Lang::En);
        assert_eq!(choose(None, env(&[])), Lang::En);
    }
}
