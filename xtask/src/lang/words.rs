//! Every word of the learner's commands (`check`, `watch`, `hint`, `list`, `solution`, `reset`),
//! of the status line and the progress lines a grading prints, of a learner-tests chapter's
//! verdicts, of the grader's own errors, of the instructor's `grade` text, and of `grade-class`
//! (its page's headings and paragraphs, its lines on the terminal), keyed, in each language the grader speaks: a key cannot exist
//! without both texts, and ci's translations stage fails on one whose Japanese is its English. A
//! text names its arguments by position (`{0}`, `{1}`), so a language can put them in its own
//! order. Not here: a check's evidence message (the panic of a hidden check) stays English for
//! now, as rustc's own messages do; the gradebook's CSV and the JSON reports keep English names,
//! as spreadsheets and scripts read them; clap's `--help` is English.

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
    WatchStopped => "Stopped. Your work on {0} is saved in your files; run `cargo xtask watch {0}` to go on.",
        "停止しました。{0} の作業はファイルに保存されています。`cargo xtask watch {0}` で続きから再開できます。";
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
    // A learner-tests chapter's rules (a mutant's description comes from the chapter's ja.toml).
    SuitePassesOnCorrectCode => "your tests pass on the correct code",
        "あなたのテストが正しいコードで合格する";
    SuiteRunsOnVirtualTime => "your tests run in under {0} ms of real time",
        "あなたのテストが実時間 {0} ms 未満で終わる";
    CatchesHiddenBug => "catches a hidden bug: {0}", "隠れたバグを見つける: {0}";
    // The class report's headings.
    ClassReport => "Class report", "クラスのレポート";
    DistributionOfTotals => "Distribution of totals", "合計点の分布";
    WhereTheClassIs => "Where the class is", "クラスの進み具合";
    WhatToTeachAgain => "What to teach again", "もう一度教えたいこと";
    Students => "Students", "学生";
    ColumnChapter => "chapter", "章";
    ColumnPassing => "passing", "合格率";
    ColumnBook => "book", "本書";
    ColumnLeftOut => "left out", "対象外";
    ColumnStudent => "student", "学生";
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
        "章 `{0}` はありません。{1} — フォルダー {2} のことでしょうか。`cargo xtask list` で\
        すべての章を表示できます";
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
    // The status line and the progress lines (a plain line when stderr is not a terminal).
    StatusCompiling => "Compiling the checks", "チェックをコンパイルしています";
    StatusCompilingWith => "Compiling the checks with {0}", "{0} とチェックをコンパイルしています";
    StatusCompilingCold => "Compiling the checks and the chapter's dependencies (only the first \
        time)",
        "チェックと章の依存クレートをコンパイルしています（初回のみ）";
    StatusCrates => "{0}/{1} crates · {2}", "{0}/{1} クレート · {2}";
    StatusRunningChecks => "Running the checks", "チェックを実行しています";
    StatusTogether => "Running {0} together (at most {1})",
        "{0}をまとめて実行しています（最大 {1}）";
    StatusAlone => "Running {0} alone, {1} at a time (at most {2})",
        "{0}を 1 件ずつ単独で、同時に {1} 件まで実行しています（最大 {2}）";
    OneCheck => "1 check", "チェック 1 件";
    ManyChecks => "{0} checks", "チェック {0} 件";
    OneVisibleTest => "1 visible test", "公開テスト 1 件";
    ManyVisibleTests => "{0} visible tests", "公開テスト {0} 件";
    ChecksAndTests => "{0} and {1}", "{0}と{1}";
    StatusSuiteCopies => "Running your tests on copies of the code: {0} of {1}",
        "コードのコピーであなたのテストを実行しています: {1} 件中 {0} 件目";
    Seconds => "{0} s", "{0} 秒";
    // A learner-tests chapter's verdicts (the grader's own words, not a check's evidence).
    YourTests => "{0} (your tests)", "{0}（あなたのテスト）";
    SuiteNotMeasured => "not measured: your tests must first pass on the correct code",
        "計測していません: まずあなたのテストが正しいコードで合格する必要があります";
    SuiteTooSlow => "your tests took {0} ms of real time on the correct code (the limit is {1} \
        ms): a real sleep is the usual cause (use tokio's paused clock, \
        `#[tokio::test(start_paused = true)]`, so sleeps cost nothing, and never \
        std::thread::sleep); if your tests do not sleep, they do too much work: fewer proptest \
        cases or smaller inputs",
        "あなたのテストは正しいコードで実時間 {0} ms かかりました（上限は {1} ms）。よくある原因は\
        実際のスリープです。tokio の一時停止したクロック（`#[tokio::test(start_paused = true)]`）\
        を使えばスリープは時間を使いません。std::thread::sleep は決して使わないでください。\
        スリープしていないなら、テストの処理が多すぎます。proptest のケースを減らすか、\
        入力を小さくしてください";
    SuiteNotCounted => "not counted: your tests must first pass on the correct code and on every \
        copy of it written differently",
        "数えていません: まずあなたのテストが、正しいコードと、書き方だけが違うそのすべての\
        コピーで合格する必要があります";
    SuiteRunTrouble => "your test run did not finish normally: {0}",
        "あなたのテストの実行が正常に終わりませんでした: {0}";
    SuiteFailsOnCorrect => "{0} of your tests fail on the correct code ({1}); a test must pass \
        when the code is right",
        "あなたのテストのうち {0} 件が正しいコードで失敗します（{1}）。コードが正しければ\
        テストは合格しなければなりません";
    SuiteEmpty => "no test ran: an empty suite catches nothing; write #[test] or #[tokio::test] \
        functions",
        "テストが 1 つも実行されませんでした。空のテストスイートは何も見つけません。\
        #[test] か #[tokio::test] の関数を書いてください";
    SuiteFailsOnRewrite => "your tests pass on the shipped code but not on a copy of it that \
        behaves exactly the same and is only written differently ({0}); {1}. A test must check \
        what the code does, never its text",
        "あなたのテストは配布時のコードでは合格しますが、動作はまったく同じで書き方だけが違う\
        コピーでは合格しません（{0}）。{1}。テストはコードの文面ではなく、コードが何をするかを\
        確かめなければなりません";
    SuiteRewriteDoesNotCompile => "your tests do not compile against a copy of the code under \
        test that is only written differently ({0}): they must use its public items only",
        "あなたのテストは、書き方だけが違うテスト対象のコードのコピーに対してコンパイルできません\
        （{0}）。テストは公開された項目だけを使わなければなりません";
    MutantSurvived => "a hidden mutant survived your tests — {0}. All {1} of your tests passed \
        on it; add a test that fails when the code does this",
        "隠れたミュータントがあなたのテストを生き延びました — {0}。あなたのテスト {1} 件はすべて\
        これに合格しました。コードがこう動いたときに失敗するテストを追加してください";
    MutantDoesNotCompile => "mutant {0} does not compile (an author's error, not yours)",
        "ミュータント {0} がコンパイルできません（作者の誤りで、あなたの誤りではありません）";
    TestsPrintedTooMuch => "the tests of {0} printed more than {1} MiB",
        "{0} のテストが {1} MiB を超えて出力しました";
    TestsTimedOut => "the tests of {0} did not finish within {1} s",
        "{0} のテストが {1} 秒以内に終わりませんでした";
    TestsEndedAbnormally => "the tests of {0} ended abnormally ({1})",
        "{0} のテストが異常終了しました（{1}）";
    SuiteReachesOutside => "{0}:{1} uses `{2}`: a suite may not read files, the environment or \
        the process, nor use the network — it tests the code by calling it. If `{2}` is only a \
        name of yours, rename it",
        "{0}:{1} で `{2}` を使っています。テストスイートはファイル、環境変数、プロセスを読んだり、\
        ネットワークを使ったりしてはいけません。コードは呼び出して確かめます。`{2}` が\
        あなたの付けた名前にすぎないなら、名前を変えてください";
    SuiteHoldsCopy => "your tests hold a copy of {0} ({1}% of its code, renamed or not): a suite \
        that compares the code with a copy of itself only checks that it did not change. Check \
        what the code must do instead",
        "あなたのテストは {0} のコピーを含んでいます（名前を変えたかどうかにかかわらず、コードの \
        {1}%）。コードを自分自身のコピーと比べるテストスイートは、コードが変わっていないことしか\
        確かめません。代わりに、コードがすべきことを確かめてください";
    // A chapter's status in the class report and the `grade` text (the gradebook's CSV keeps the
    // English words).
    StatusMissing => "missing", "提出なし";
    StatusDoesNotCompile => "does not compile", "コンパイル不可";
    StatusPartial => "partial", "一部合格";
    StatusDone => "done", "完了";
    // A student's status in the class report.
    StudentGraded => "graded", "採点済み";
    StudentFailed => "failed", "採点できず";
    StudentRejected => "rejected", "却下";
    // The class report's paragraphs.
    MadeBy => "Made {0} by grader {1} with checks {2}{3}.",
        "作成 {0}、採点器 {1}、チェック {2}{3}。";
    DueOn => ", due {0}", "、締め切り {0}";
    ClassSummary => "{0} students: {1} graded, {2} could not be graded, {3} missing, {4} reports \
        rejected. Chapters: {5}.",
        "学生 {0} 人: 採点済み {1} 人、採点できず {2} 人、提出なし {3} 人、却下したレポート \
        {4} 件。章: {5}。";
    UntrustedWarning => "<strong>{0} result(s) are not trusted</strong>: the student controlled \
        the grader or the checks that produced them (their own workflow or machine), or they came \
        from an untrusted folder. They are feedback, not grades; they are marked {1} below.",
        "<strong>{0} 件の結果は信頼できません</strong>。その結果を出した採点器かチェックを\
        学生自身が管理していた（学生自身のワークフローやマシン）か、信頼しないフォルダーから\
        来た結果です。成績ではなくフィードバックとして扱ってください。下の表では {1} の印が\
        付いています。";
    Trusted => "trusted", "信頼できる";
    UntrustedFolder => "it came from a folder given as --untrusted-reports",
        "--untrusted-reports で指定したフォルダーから来た結果です";
    UntrustedOwnCopy => "the student's own copy of the grader produced it (their own workflow or \
        machine): feedback, not a grade",
        "学生自身の採点器のコピー（学生自身のワークフローやマシン）が出した結果です。\
        成績ではなくフィードバックです";
    UntrustedOtherChecks => "it was graded with checks that differ from yours",
        "あなたのものとは異なるチェックで採点された結果です";
    UntrustedOtherGrader => "it was graded by a grader of the same version built from other \
        sources than yours",
        "同じバージョンでも、あなたのものとは異なるソースからビルドされた採点器で\
        採点された結果です";
    Untrusted => "untrusted", "信頼できない";
    HistogramLabel => "How many students have each total", "合計点ごとの学生数";
    HistogramBar => "{0} student(s) with {1} to {2} points", "{1}〜{2} 点の学生 {0} 人";
    TotalsStats => "{0} graded · mean {1} · median {2} · lowest {3} · highest {4} (of {5} points)",
        "採点済み {0} 人 · 平均 {1} · 中央値 {2} · 最低 {3} · 最高 {4}（{5} 点満点）";
    ChaptersExplained => "Graded students by their status in each chapter: <em>not started</em> \
        (the exercise is as shipped), <em>does not compile</em>, <em>partial</em> (it compiles, \
        some check fails), <em>done</em> (every point), or <em>missing</em> (no folder for the \
        chapter).",
        "採点済みの学生を、章ごとの状態で数えます。<em>未着手</em>（演習が配布時のまま）、\
        <em>コンパイル不可</em>、<em>一部合格</em>（コンパイルできるが、不合格のチェックがある）、\
        <em>完了</em>（満点）、<em>提出なし</em>（その章のフォルダーがない）のいずれかです。";
    TeachAgainExplained => "Every check of every chapter with the share of the students who \
        attempted the chapter, and whose code compiles, that pass it: the rules most missed \
        first. The students who have not started the chapter, whose code does not compile or who \
        lack it tell nothing about a rule; they are counted beside. Checks of a chapter nobody \
        attempted come last.",
        "すべての章のすべてのチェックについて、その章に取り組みコードがコンパイルできる学生の\
        うち、そのチェックに合格した人の割合を示します。合格の少ないルールから順に並べています。\
        章に未着手の学生、コードがコンパイルできない学生、章のフォルダーがない学生からは\
        ルールについて何もわからないため、割合には含めず、横の列に人数を示します。\
        だれも取り組んでいない章のチェックは最後に並びます。";
    StudentsExplained => "Each chapter's weighted points, the student's status in it and the \
        checks passed; a chapter's failed checks are folded under it.",
        "章ごとの重み付きの点数、その章での学生の状態、合格したチェックの数です。\
        章の不合格のチェックは、その下に折りたたんであります。";
    Late => " · late", " · 期限後";
    ChecksPassedOf => " · {0} of {1} checks", " · チェック {1} 件中 {0} 件合格";
    PointsOfRubric => "{0}/{1} points of the rubric", "ルーブリックの {0}/{1} 点";
    FailedCount => "{0} failed", "不合格 {0} 件";
    // The class report's lines on the terminal.
    StudentPoints => "{0}: {1} of {2} points, {3} ({4})", "{0}: {2} 点中 {1} 点、{3}（{4}）";
    StudentNotGraded => "{0}: not graded: {1}", "{0}: 採点できませんでした: {1}";
    GradedStudents => "Graded {0} students in {1}: {2} graded now ({3} could not be graded), {4} \
        reused from an earlier run, {5} missing.",
        "{1} で学生 {0} 人を採点しました。今回採点 {2} 人（うち採点できず {3} 人）、\
        以前の実行から再利用 {4} 人、提出なし {5} 人です。";
    ReportsFolderMissing => "the reports folder {0} does not exist",
        "レポートのフォルダー {0} がありません";
    TwoReports => "note: {0} has two reports; {1} is kept, {2} is left out",
        "注意: {0} にはレポートが 2 つあります。{1} を使い、{2} は除外します";
    NotOnRoster => "note: {0} has a report but is not on the roster; listed anyway",
        "注意: {0} のレポートがありますが名簿にありません。そのまま一覧に含めます";
    TimeoutTooShort => "--timeout {0} is too short: a check of these chapters may take {1} s by \
        itself; give each student at least {2} s",
        "--timeout {0} は短すぎます。これらの章のチェックは 1 つで {1} 秒かかることがあります。\
        学生 1 人に少なくとも {2} 秒を与えてください";
    UntrustedResults => "{0} result(s) are untrusted (graded by the student's own grader, or \
        from an untrusted folder): feedback, not grades; every output marks them.",
        "{0} 件の結果は信頼できません（学生自身の採点器で採点されたか、信頼しない\
        フォルダーから来たものです）。成績ではなくフィードバックです。すべての出力に印を\
        付けています。";
    RejectedReport => "rejected: {0} ({1}): {2}", "却下: {0}（{1}）: {2}";
    ReportsAreIn => "Reports are in {0}{1}:\nGradebook: {2}\nClass report: {3} and {4}",
        "レポートは {0}{1} にあります:\n成績表: {2}\nクラスのレポート: {3} と {4}";
    KeptOutOfGit => " (its .gitignore keeps students' grades out of git)",
        "（その .gitignore が学生の成績を git に入れないようにしています）";
    NotIgnored => "note: {0} is inside the workbook and holds {1}, which grade-class did not \
        write: add the folder to .gitignore yourself, or choose another --out",
        "注意: {0} はワークブックの中にあり、grade-class が書いていない {1} を含んでいます。\
        そのフォルダーを自分で .gitignore に加えるか、別の --out を選んでください";
    PreparingSlot => "Preparing {0}: compiling the checks' dependencies once (minutes on a cold \
        machine)…",
        "{0} を準備しています: チェックの依存クレートを一度だけコンパイルします（初回のマシンでは\
        数分かかります）…";
    TimeLeftMeasuring => "time left: measuring", "残り時間: 計測中";
    AboutLeft => "about {0} left", "残り約 {0}";
    ClassProgress => "{0}/{1} done · {2} running · {3} failed · {4} reused · {5} ({6} at once)",
        "{0}/{1} 完了 · {2} 実行中 · {3} 失敗 · {4} 再利用 · {5}（同時に {6}）";
    MinutesSeconds => "{0} min {1} s", "{0} 分 {1} 秒";
    BookNoteCi => "The report was made on a CI runner, whose book is gone once the run ends, so \
        the sections below are named without links: give a hosted book with --book-url (or \
        WORKBOOK_BOOK_URL).",
        "このレポートは CI のランナーで作られました。ランナーの本書は実行が終わると消えるため、\
        下の節はリンクなしで示しています。--book-url（または WORKBOOK_BOOK_URL）で公開されている\
        本書を指定してください。";
    BookNoteNotBuilt => "The book could not be built here ({0}), so the sections below are named \
        without links: run `cargo xtask book`, or give a hosted book with --book-url.",
        "ここでは本書をビルドできなかったため（{0}）、下の節はリンクなしで示しています。\
        `cargo xtask book` を実行するか、--book-url で公開されている本書を指定してください。";
    BookNoteOlder => "The book could not be rebuilt ({0}): the links lead to an older build.",
        "本書をビルドし直せませんでした（{0}）。リンク先は古いビルドです。";
    BookNoteUnlinked => "{0} section(s) are not in the built book ({1}), so they are named \
        without a link.",
        "{0} 個の節がビルド済みの本書にないため（{1}）、リンクなしで示しています。";
    BuildingBookForLinks => "Building the book for the class report's links (cargo xtask book; \
        once, a few seconds)…",
        "クラスのレポートのリンクのために本書をビルドしています（cargo xtask book、一度だけ、\
        数秒）…";
    Note => "note: {0}", "注意: {0}";
    AnotherGradeClass => "another grade-class is writing to {0}; wait for it, or choose another \
        --out",
        "別の grade-class が {0} に書き込んでいます。終わるのを待つか、別の --out を選んでください";
    StoppedClass => "Stopped. The students graded so far are kept; run the same command again to \
        grade the others.",
        "停止しました。ここまでに採点した学生の結果は残っています。残りの学生を採点するには、\
        同じコマンドをもう一度実行してください。";
    // The instructor's `grade` text (the table's heads are the class report's).
    GradeOfCopy => "Grade of the copy at {0}", "{0} にあるコピーの成績";
    OfTotal => "{0} of {1}", "{0}/{1}";
    StudentDoesNotCompile => "{0}: the student's code does not compile, so no check could run \
        (0/{1} rubric points).",
        "{0}: 学生のコードがコンパイルできないため、チェックを 1 つも実行できませんでした\
        （ルーブリックの 0/{1} 点）。";
    StudentPasses => "{0}: the student's code passes {1} of {2} checks ({3}/{4} rubric points).",
        "{0}: 学生のコードはチェック {2} 件中 {1} 件に合格しています（ルーブリックの {3}/{4} 点）。";
    StudentChangedFile => "warning: the student changed {0}, which must stay as shipped",
        "警告: 学生が {0} を変更しています。このファイルは配布時のままでなければなりません";
    StudentApiChanged => "The hidden checks do not compile against the student's crate: its \
        public API (names, parameters, types) differs from the exercise's.",
        "隠しチェックが学生のクレートに対してコンパイルできません。公開 API（名前、引数、型）が\
        演習のものと異なっています。";
    MoreErrorsCount => "… and {0} more error(s).", "… ほかにエラーが {0} 件あります。";
    TheRule => "the rule: book §{0}{1} ({2})", "ルール: 本書 §{0}{1} ({2})";
    StudentVisibleTests => "The student's visible tests: {0} of {1} pass.",
        "学生の公開テスト: {1} 件中 {0} 件が合格です。";
    StudentVisibleTestsFailing => "The student's visible tests: {0} of {1} pass; failing: {2}.",
        "学生の公開テスト: {1} 件中 {0} 件が合格、不合格は {2} です。";
    TheCrateIn => "the crate in {0}", "{0} のクレート";
    // Why a check did not pass, told to the instructor (`grade`).
    StudentPanickedAt => "the student's code panicked at {0}: {1}",
        "学生のコードが {0} でパニックしました: {1}";
    StudentPanicked => "the student's code panicked: {1}", "学生のコードがパニックしました: {1}";
    CheckReported => "the check reported: {0}", "チェックの報告: {0}";
    StudentTimedOut => "did not finish within {0} s of real time and was stopped (the usual \
        causes: an endless loop, a retry that never gives up, a future that never completes, a \
        blocking std::thread::sleep)",
        "実時間 {0} 秒以内に終わらなかったため停止しました（よくある原因: 無限ループ、\
        あきらめないリトライ、完了しない future、ブロッキングする std::thread::sleep）";
    StudentOutputFlood => "printed more than {0} MiB and was stopped: the student's code prints \
        in a loop",
        "{0} MiB を超えて出力したため停止しました。学生のコードがループの中で出力しています";
    MissingCheckForInstructor => "not in the check binary: the rubric and its check files \
        disagree (a fault of the checks, not of the student)",
        "チェックのバイナリにありません。ルーブリックとチェックのファイルが食い違っています\
        （チェックの誤りで、学生の誤りではありません）";
    SkippedOnThisMachine => "skipped on this machine, no points: {0}",
        "このマシンではスキップ（0 点）: {0}";
    // Why a check's process ended without a verdict (the grader's words, not a check's).
    PrintedAVerdict => "your code printed a line that reads like the test runner's verdict \
        (`test <name> ... ok`); the grader reads a check's result from those lines, so a run that \
        prints one cannot be trusted. Print progress in other words",
        "あなたのコードが、テストランナーの判定のように読める行（`test <name> ... ok`）を出力し\
        ました。採点器はこうした行からチェックの結果を読み取るため、それを出力する実行は\
        信頼できません。進み具合は別の言葉で出力してください";
    StackOverflowed => "the stack overflowed (unbounded recursion?)",
        "スタックがあふれました（終わらない再帰ではありませんか？）";
    OutOfMemory => "ran out of memory: {0} (the limit is {1} MiB)",
        "メモリが足りなくなりました: {0}（上限は {1} MiB）";
    ProcessAborted => "the process aborted (std::process::abort, or a panic during a panic)",
        "プロセスが異常終了しました（std::process::abort か、パニック中のパニック）";
    ProcessKilledMemory => "the process was killed, most likely for exceeding the {0} MiB memory \
        limit",
        "プロセスが強制終了されました。おそらくメモリの上限 {0} MiB を超えたためです";
    ProcessKilledBy => "the process was killed by {0}", "プロセスが {0} によって強制終了されました";
    ProcessExited => "the process exited with code {0} before the check finished \
        (std::process::exit?)",
        "チェックが終わる前に、プロセスが終了コード {0} で終了しました（std::process::exit を\
        呼んでいませんか？）";
    ProcessEndedWithoutResult => "the process ended without a result",
        "プロセスが結果を出さずに終了しました";
    // The grader's own errors, more.
    PathDoesNotExist => "{0} does not exist", "{0} がありません";
    CouldNotStart => "the grader could not start {0}", "採点器が {0} を起動できませんでした";
    // The status line.
    Running => "running", "実行中";
    TimeOfLimit => "{0} of {1}", "{0}/{1}";
}

/// The keys whose Japanese is missing: empty, or the English left as it is (ci's translations
/// stage fails on any).
pub fn untranslated() -> Vec<Key> {
    Key::ALL
        .iter()
        .copied()
        .filter(|key| {
            let ja = key.text(Lang::Ja);
            ja.trim().is_empty() || ja == key.text(Lang::En)
        })
        .collect()
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

pub use super::width::columns;

/// `text` padded with spaces on the right to `width` columns.
pub fn pad(text: &str, width: usize) -> String {
    format!("{text}{}", " ".repeat(width.saturating_sub(columns(text))))
}

/// `text` padded with spaces on the left to `width` columns.
pub fn pad_left(text: &str, width: usize) -> String {
    format!("{}{text}", " ".repeat(width.saturating_sub(columns(text))))
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
