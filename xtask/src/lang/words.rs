//! Every word of the learner's commands (`check`, `watch`, `hint`, `list`, `solution`, `reset`,
//! the status line), the grader's own errors for them and the class report's headings, keyed, in
//! each language the grader speaks. A text names its arguments by
//! position (`{0}`, `{1}`), so a language can put them in its own order. A check's evidence
//! message (the panic of a hidden check) is not here: it stays English for now, as rustc's own
//! messages do.

use std::fmt::Display;

use crate::lang::{self, Lang};

/// Declares the keys with their texts: a key cannot exist without both languages.
macro_rules! catalogue {
    ($($key:ident => $en:literal, $ja:literal;)*) => {
        /// One text of the grader's catalogue.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Key {
            $($key,)*
        }

        impl Key {
            /// Every key, in the order of the catalogue.
            #[cfg(test)]
            pub const ALL: &[Key] = &[$(Key::$key,)*];

            /// The text in `lang`, with its `{n}` placeholders.
            pub fn text(self, lang: Lang) -> &'static str {
                match (self, lang) {
                    $(
                        (Key::$key, Lang::En) => $en,
                        (Key::$key, Lang::Ja) => $ja,
                    )*
                }
            }
        }
    };
}

catalogue! {
    // The report's head.
    YourExercise => "your exercise", "あなたの演習";
    TheSolution => "the solution", "模範解答";
    Mutant => "mutant {0}", "ミュータント {0}";
    DoesNotCompile => "{0} it does not compile, so no check could run (0/{1} points).",
        "{0} コンパイルできないため、チェックを 1 つも実行できませんでした（0/{1} 点）。";
    StartHere => "Start here:", "ここから始めましょう:";
    FixFirstError => "fix the first error, at {0}, then check again.",
        "まず {0} にある最初のエラーを直し、もう一度チェックしてください。";
    WorkbookAt => "workbook: {0}", "ワークブック: {0}";
    UnchangedBuild => "unchanged since the last build", "前回のビルドから変更なし";
    CompiledIn => "compiled in {0} s", "コンパイル {0} 秒";
    ChecksRanIn => "checks ran in {0} s", "チェック実行 {0} 秒";
    Score => "Score {0}/{1}", "得点 {0}/{1}";
    OfPassed => "{0} of {1} {2} passed", "{2} {1} 件中 {0} 件に合格";
    SkippedCount => " · {0} skipped (not run here, no points)",
        " · {0} 件スキップ（この環境では実行されず 0 点）";
    // The table.
    ColumnCheck => "check", "チェック";
    ColumnPoints => "points", "点";
    ColumnRule => "rule", "ルール";
    Checks => "checks", "チェック";
    VisibleTests => "visible tests", "公開テスト";
    Errors => "errors", "エラー";
    YourVisibleTests => "your visible tests", "あなたの公開テスト";
    UnlistedFailed => "{0} {1} failed; add --verbose to see every row in full",
        "{1} {0} 件が不合格です。すべての行を詳しく見るには --verbose を付けてください";
    UnlistedMoreFailed => "{0} more {1} failed; add --verbose to see every row in full",
        "ほかに{1} {0} 件が不合格です。すべての行を詳しく見るには --verbose を付けてください";
    FoldedPassed => "{0} {1} passed", "{1} {0} 件に合格";
    BookSection => "→ book §{0}{1} ({2})", "→ 本書 §{0}{1} ({2})";
    SkipReason => "{0} {1} skipped, no points: {2}", "{1} {0} 件をスキップ（0 点）: {2}";
    // What went wrong.
    Passed => "passed", "合格";
    StillTodo => "still a todo!(): {0}{1}", "まだ todo!() のままです: {0}{1}";
    AssertionFailed => "the test's assertion at {0} failed",
        "{0} にあるテストのアサーションが失敗しました";
    AssertionFailedWith => "the test's assertion at {0} failed: {1}",
        "{0} にあるテストのアサーションが失敗しました: {1}";
    TestPanicked => "the test itself panicked at {0}: {1}",
        "テスト自体が {0} でパニックしました: {1}";
    YourCodePanicked => "your code panicked at {0}: {1}",
        "あなたのコードが {0} でパニックしました: {1}";
    UnknownPlace => "an unknown place", "不明な場所";
    TimedOut => "did not finish within {0} s of real time and was stopped: an endless loop, a retry \
        that never gives up, a future that never completes, or a blocking std::thread::sleep are \
        the usual causes (checks run on a paused tokio clock, where tokio sleeps cost no real time); \
        so is work that grows with every call, such as rescanning a whole collection each time, \
        when the page states a cost rule",
        "実時間 {0} 秒以内に終わらなかったため停止しました。よくある原因は、無限ループ、\
        あきらめないリトライ、完了しない future、ブロッキングする std::thread::sleep です\
        （チェックは停止した tokio の時計の上で動くので、tokio の sleep は実時間を使いません）。\
        呼び出しのたびに増える処理（毎回コレクション全体を走査するなど）も原因になります。\
        ページが計算量の決まりを示している場合は、それに従ってください";
    Crashed => "crashed: {0}", "クラッシュしました: {0}";
    OutputFlood => "printed more than {0} MiB of output (a check may print at most that much); \
        remove the printing from the loop",
        "{0} MiB を超える出力をしました（チェックが出力できるのはそこまでです）。\
        ループの中の出力を取り除いてください";
    MissingCheck => "this check is missing from the check binary: the chapter's rubric and its \
        check files disagree (an author's error, not yours)",
        "このチェックがチェックのバイナリにありません。章のルーブリックとチェックのファイルが\
        食い違っています（作者の誤りで、あなたの誤りではありません）";
    SkippedNoPoints => "skipped, no points: {0}", "スキップ（0 点）: {0}";
    ApiChanged => "The hidden checks do not compile against your crate: its public API (names, \
        parameters, types) must stay as the exercise gives it.",
        "隠しチェックがあなたのクレートに対してコンパイルできません。公開 API（名前、引数、型）は\
        演習で与えられたとおりにしておく必要があります。";
    MoreErrors => "… and {0} more {1}.", "… ほかに{1}が {0} 件あります。";
    AddVerboseErrors => " Add --verbose to see every error in full.",
        " すべてのエラーを詳しく見るには --verbose を付けてください。";
    // After the report (`check`, `watch`).
    EveryChapterPasses => "Every chapter passes. `cargo xtask list` shows them all.",
        "すべての章に合格しています。`cargo xtask list` で一覧を表示できます。";
    CannotBeGraded => "{0} cannot be graded: {1}", "{0} は採点できません: {1}";
    ProgressUnreadable => "note: {0} was unreadable and has been started afresh",
        "注意: {0} を読めなかったため、進捗を最初からやり直しました";
    ProgressNotSaved => "note: progress not saved: {0}", "注意: 進捗を保存できませんでした: {0}";
    NotAsShipped => "{0} is not as shipped:", "{0} が配布時の状態と異なります:";
    FileDeparture => "  {0} {1}; `{2}` restores it", "  {0} {1}。`{2}` で元に戻せます";
    FileIsMissing => "is missing", "がありません";
    GivenFileChanged => "was changed, but it is given: the checks expect it as shipped",
        "が変更されていますが、これは配布ファイルです。チェックは配布時のままであることを前提にしています";
    FileChanged => "was changed", "が変更されています";
    ChapterDone => "{0} is done.", "{0} は完了です。";
    CompareWithReference => "Compare with the reference: `cargo xtask solution {0}`.",
        "模範解答と比べてみましょう: `cargo xtask solution {0}`。";
    SkippedEarnedNothing => "{0} of its checks could not run here and earned nothing; the table \
        says how to run them.",
        "チェックのうち {0} 件はこの環境では実行できず、点になりませんでした。実行方法は表に書かれています。";
    NextChapter => "Next: {0} — read {1} and run `cargo xtask check {2}`.",
        "次は {0} です。{1} を読んで `cargo xtask check {2}` を実行しましょう。";
    NextSteps => "Read {0} (`cargo xtask book --open`), edit {1}, and run `cargo xtask check {2}` \
        again (or `cargo xtask watch {2}` to re-check on every save). Stuck? `cargo xtask hint {2}`.",
        "{0} を読み（`cargo xtask book --open`）、{1} を編集して、もう一度 `cargo xtask check {2}` \
        を実行してください（`cargo xtask watch {2}` なら保存のたびにチェックし直します）。\
        行き詰まったら `cargo xtask hint {2}` を使いましょう。";
    WatchPasses => "{0} passes. Move on with `cargo xtask watch` (next chapter) or keep polishing.",
        "{0} に合格しました。`cargo xtask watch` で次の章に進むか、さらに磨きをかけましょう。";
    WatchKeys => "watching for changes — h hint · l list · c check · q quit",
        "変更を監視しています — h ヒント · l 一覧 · c チェック · q 終了";
    WatchNoKeys => "watching for changes — keys are off (input is not a terminal); Ctrl-C stops",
        "変更を監視しています — 入力が端末ではないためキー操作は無効です。Ctrl-C で終了します";
    // `hint`.
    NoHintsNeeded => "every chapter passes: no hints needed",
        "すべての章に合格しています。ヒントは必要ありません";
    NoHints => "{0} has no hints. The book page is {1}.",
        "{0} にはヒントがありません。本書のページは {1} です。";
    HintOf => "Hint {0} of {1} for {2}:", "{2} のヒント {0}/{1}:";
    LastHint => "That was the last hint. The book explains every check: {0}. As a last resort, \
        `cargo xtask solution {1} --force` shows the reference solution.",
        "これが最後のヒントです。すべてのチェックは本書で説明しています: {0}。最後の手段として、\
        `cargo xtask solution {1} --force` で模範解答を表示できます。";
    NextHint => "Run `cargo xtask hint {0}` again for the next hint.",
        "次のヒントを見るには、もう一度 `cargo xtask hint {0}` を実行してください。";
    // `solution`.
    NotPassedYet => "{0} does not pass yet: try `cargo xtask hint {0}` first, or add --force to \
        see the solution anyway",
        "{0} にはまだ合格していません。まず `cargo xtask hint {0}` を試してください。\
        それでも模範解答を見るなら --force を付けてください";
    WholeCrate => "// The whole crate: {0}", "// クレート全体: {0}";
    // `list`.
    NotWrittenYet => "(not written yet)", "（未執筆）";
    PointsOf => "{0}/{1} points", "{0}/{1} 点";
    NotStarted => "not started", "未着手";
    ListNext => "Next: `cargo xtask check {0}`.", "次は `cargo xtask check {0}` です。";
    DoneWhen => "✓ done{0}", "✓ 完了{0}";
    PassedWhen => " (passed {0})", "（{0}に合格）";
    ChangedSinceScore => "changed since, last check {0}/{1}", "その後に変更あり、前回のチェック {0}/{1}";
    ChangedSince => "changed since: check again", "その後に変更あり: もう一度チェックしてください";
    PassedAgo => "✓ passed {0};", "✓ {0}に合格;";
    JustNow => "just now", "たった今";
    MinuteAgo => "1 minute ago", "1 分前";
    MinutesAgo => "{0} minutes ago", "{0} 分前";
    HourAgo => "1 hour ago", "1 時間前";
    HoursAgo => "{0} hours ago", "{0} 時間前";
    DayAgo => "1 day ago", "1 日前";
    DaysAgo => "{0} days ago", "{0} 日前";
    // `reset`.
    CargoCannotLoad => "warning: cargo cannot load the workbook's workspace: {0}",
        "警告: cargo がワークブックのワークスペースを読み込めません: {0}";
    ManifestBroken => "{0} is broken ({1}): `{2}` restores the shipped one (yours is backed up first)",
        "{0} が壊れています（{1}）。`{2}` で配布時のものに戻せます（あなたのファイルは先にバックアップされます）";
    BackedUp => "Backed up your files to {0}", "あなたのファイルを {0} にバックアップしました";
    Restored => "  restored {0}", "  元に戻しました {0}";
    Removed => "  removed  {0}", "  削除しました   {0}";
    ResetTo => "Reset {0} to the shipped exercise (as recorded in {1}).",
        "{0} を配布時の演習に戻しました（{1} の記録のとおり）。";
    GetWorkBack => "To get your work back:\n  {0}", "作業を取り戻すには:\n  {0}";
    AlreadyAsShipped => "{0} is already as shipped.", "{0} はすでに配布時のままです。";
    RestoredBackedUp => "Restored {0} as shipped. Yours is backed up in {1}; to get it back:\n  {2}",
        "{0} を配布時の状態に戻しました。あなたのファイルは {1} にバックアップしてあります。取り戻すには:\n  {2}";
    RestoredWasMissing => "Restored {0} as shipped (it was missing).",
        "{0} を配布時の状態に戻しました（ファイルがありませんでした）。";
    NotShipped => "{0} was not shipped with {1}; its shipped files are {2}",
        "{0} は {1} の配布ファイルではありません。配布ファイルは {2} です";
    // A learner-tests chapter's rules (a mutant's description stays English for now).
    SuitePassesOnCorrectCode => "your tests pass on the correct code",
        "あなたのテストが正しいコードで合格する";
    SuiteRunsOnVirtualTime => "your tests run in under {0} ms of real time",
        "あなたのテストが実時間 {0} ms 未満で終わる";
    CatchesHiddenBug => "catches a hidden bug: {0}", "隠れたバグを見つける: {0}";
    // The class report's headings (its explanations stay English for now).
    ClassReport => "Class report", "クラスのレポート";
    DistributionOfTotals => "Distribution of totals", "合計点の分布";
    WhereTheClassIs => "Where the class is", "クラスの進み具合";
    WhatToTeachAgain => "What to teach again", "もう一度教えたいこと";
    Students => "Students", "受講者";
    ColumnChapter => "chapter", "章";
    ColumnPassing => "passing", "合格率";
    ColumnBook => "book", "本書";
    ColumnLeftOut => "left out", "対象外";
    ColumnStudent => "student", "受講者";
    ColumnStatus => "status", "状態";
    ColumnTotal => "total", "合計";
    // The grader's own errors.
    ErrorPrefix => "error: {0}", "エラー: {0}";
    NoChapterNumber => "there is no chapter `{0}`: they go from {1} to {2}, and `cargo xtask list` \
        shows them with their titles",
        "章 `{0}` はありません。章は {1} から {2} までで、`cargo xtask list` でタイトルとともに\
        一覧できます";
    NoChapterDidYouMean => "there is no chapter `{0}`; did you mean {1} ({2})? `cargo xtask list` \
        shows every chapter",
        "章 `{0}` はありません。{1}（{2}）のことでしょうか。`cargo xtask list` ですべての章を\
        表示できます";
    NoChapterNameOne => "there is no chapter `{0}`; name one by its id (ch08), number (8), folder \
        (ch08-full-jitter) or slug (full-jitter):\n{1}",
        "章 `{0}` はありません。ID（ch08）、番号（8）、フォルダー名（ch08-full-jitter）または\
        スラッグ（full-jitter）で章を指定してください:\n{1}";
    ChapterNotWritten => "{0} is not written yet (it is a draft in {1}); `cargo xtask list` shows \
        the chapters you can do",
        "{0} はまだ執筆されていません（{1} にある下書きです）。取り組める章は \
        `cargo xtask list` で確認できます";
    NotInWorkbook => "{0} is not inside a copy of the workbook (no {1} here or above); run the \
        command from the workbook's folder",
        "{0} はワークブックのコピーの中ではありません（ここにもその上にも {1} がありません）。\
        ワークブックのフォルダーでコマンドを実行してください";
    // The status line.
    Running => "running", "実行中";
    TimeOfLimit => "{0} of {1}", "{0}/{1}";
}

/// `key`'s text in the language of this run.
pub fn t(key: Key) -> &'static str {
    key.text(lang::current())
}

/// `key`'s text in the language of this run, with `{n}` replaced by `args[n]`.
pub fn tf(key: Key, args: &[&dyn Display]) -> String {
    fill(t(key), args)
}

/// `template` with each `{n}` replaced by `args[n]`; any other brace is kept.
pub fn fill(template: &str, args: &[&dyn Display]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let index = after
            .find('}')
            .and_then(|close| after[..close].parse::<usize>().ok().map(|n| (n, close)));
        match index.and_then(|(n, close)| args.get(n).map(|arg| (arg, close))) {
            Some((arg, close)) => {
                out.push_str(&arg.to_string());
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// How many terminal columns `text` takes: East Asian wide characters take two.
pub fn columns(text: &str) -> usize {
    text.chars().map(|c| if wide(c) { 2 } else { 1 }).sum()
}

/// `text` padded with spaces on the right to `width` columns.
pub fn pad(text: &str, width: usize) -> String {
    format!("{text}{}", " ".repeat(width.saturating_sub(columns(text))))
}

/// `text` padded with spaces on the left to `width` columns.
pub fn pad_left(text: &str, width: usize) -> String {
    format!("{}{text}", " ".repeat(width.saturating_sub(columns(text))))
}

/// Whether `c` is shown two columns wide (Hangul, CJK, kana, full-width forms).
fn wide(c: char) -> bool {
    matches!(u32::from(c),
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `{n}` placeholders of a text, sorted and without repeats.
    fn placeholders(text: &str) -> Vec<usize> {
        let mut found: Vec<usize> = text
            .split('{')
            .skip(1)
            .filter_map(|part| part.split_once('}')?.0.parse().ok())
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    }

    #[test]
    fn every_key_has_both_languages_with_the_same_arguments() {
        for key in Key::ALL {
            let (en, ja) = (key.text(Lang::En), key.text(Lang::Ja));
            assert!(!en.trim().is_empty(), "{key:?} has no English");
            assert!(!ja.trim().is_empty(), "{key:?} has no Japanese");
            assert_eq!(placeholders(en), placeholders(ja), "{key:?}");
            assert_ne!(en, ja, "{key:?} is not translated");
        }
    }

    #[test]
    fn fill_puts_arguments_in_their_places() {
        assert_eq!(fill("{1} of {0}", &[&"a", &2]), "2 of a");
        assert_eq!(fill("{0} {x} {", &[&"a"]), "a {x} {");
        assert_eq!(fill("{2}", &[&"a"]), "{2}");
    }

    #[test]
    fn wide_characters_take_two_columns() {
        assert_eq!(columns("check"), 5);
        assert_eq!(columns("チェック"), 8);
        assert_eq!(pad("点", 4), "点  ");
        assert_eq!(pad_left("点", 4), "  点");
    }
}
