//! Checks of `load_per_window`: spikes exactly where the schedule puts them, the window
//! boundaries, the last window, and the empty schedule.

use std::time::Duration;

use exercise::load_per_window;

use super::support::catch;

const MS: Duration = Duration::from_millis(1);
const S: Duration = Duration::from_secs(1);
const WINDOW: Duration = Duration::from_millis(10);

/// A duration for a message, exact to the nanosecond: `10ms`, `9.999999ms`, `3s`.
fn exact(duration: Duration) -> String {
    format!("{duration:?}")
}

/// A schedule for a message: `[3s, 3s, 3s]`, shortened after six delays.
fn list(schedule: &[Duration]) -> String {
    let mut parts: Vec<String> = schedule.iter().take(6).map(|d| exact(*d)).collect();
    if schedule.len() > 6 {
        parts.push(format!("… ({} in all)", schedule.len()));
    }
    format!("[{}]", parts.join(", "))
}

/// The learner's histogram, with a panic turned into a readable failure.
fn load(schedule: &[Duration], clients: usize, window: Duration) -> Vec<usize> {
    catch(|| load_per_window(schedule, clients, window)).unwrap_or_else(|message| {
        panic!(
            "load_per_window(schedule = {}, clients = {clients}, window = {}) panicked: {message}",
            list(schedule),
            exact(window),
        )
    })
}

/// The histogram the checks expect: `clients` in the window `floor(sum / window)` of every
/// running sum (saturating at `Duration::MAX`), zero elsewhere, from window 0 to the last retry's
/// window.
fn expected_load(schedule: &[Duration], clients: usize, window: Duration) -> Vec<usize> {
    let mut at = Duration::ZERO;
    let windows: Vec<usize> = schedule
        .iter()
        .map(|delay| {
            at = at.saturating_add(*delay);
            (at.as_nanos() / window.as_nanos()) as usize
        })
        .collect();
    let Some(&last) = windows.last() else {
        return Vec::new();
    };
    let mut load = vec![0; last + 1];
    for index in windows {
        load[index] += clients;
    }
    load
}

/// The non-empty windows of a histogram as `count in [start, end)`, for a message.
fn describe(load: &[usize], window: Duration) -> String {
    let busy: Vec<String> = load
        .iter()
        .enumerate()
        .filter(|&(_, &count)| count > 0)
        .map(|(index, &count)| {
            let start = window * index as u32;
            format!("{count} in [{}, {})", exact(start), exact(start + window))
        })
        .collect();
    let shown = if busy.is_empty() {
        "none".to_owned()
    } else {
        busy.iter().take(8).cloned().collect::<Vec<_>>().join(", ")
    };
    let more = if busy.len() > 8 {
        format!(", … ({} busy windows in all)", busy.len())
    } else {
        String::new()
    };
    format!("{} window(s), busy: {shown}{more}", load.len())
}

/// The first window where two histograms differ, for a message.
fn first_difference(expected: &[usize], got: &[usize], window: Duration) -> String {
    let index = expected
        .iter()
        .zip(got)
        .position(|(e, g)| e != g)
        .unwrap_or(expected.len().min(got.len()));
    let start = window * index as u32;
    format!(
        "window {index}, [{}, {}), should hold {} and holds {}",
        exact(start),
        exact(start + window),
        expected
            .get(index)
            .map_or("nothing (past the end)".to_owned(), |n| n.to_string()),
        got.get(index)
            .map_or("nothing (past the end)".to_owned(), |n| n.to_string()),
    )
}

fn assert_load(name: &str, schedule: &[Duration], clients: usize, window: Duration, rule: &str) {
    let expected = expected_load(schedule, clients, window);
    let got = load(schedule, clients, window);
    assert!(
        got == expected,
        "{name}: load_per_window(schedule = {}, clients = {clients}, window = {}) {rule}. \
         Expected {}; yours: {}. First difference: {}",
        list(schedule),
        exact(window),
        describe(&expected, window),
        describe(&got, window),
        first_difference(&expected, &got, window),
    );
}

#[test]
fn spikes_where_schedule_predicts() {
    let rule = "must put all clients into the window of each retry's arrival time (the running \
                sum of the delays) and zero everywhere else";
    let fixed = [3 * S; 4];
    let linear = [3 * S, 6 * S, 9 * S, 12 * S];
    assert_load("fixed 3 s, 100 clients", &fixed, 100, WINDOW, rule);
    assert_load(
        "linear 3, 6, 9, 12 s, 100 clients",
        &linear,
        100,
        WINDOW,
        rule,
    );
    let short = [100 * MS, 150 * MS, 200 * MS, 250 * MS, 300 * MS];
    assert_load(
        "linear 100 ms + 50 ms, 100 clients",
        &short,
        100,
        WINDOW,
        rule,
    );
    let immediate = [Duration::ZERO, 40 * MS, 40 * MS];
    assert_load(
        "an immediate retry, then 40 ms twice",
        &immediate,
        100,
        WINDOW,
        rule,
    );
    assert_load("fixed 3 s, 7 clients", &fixed, 7, WINDOW, rule);
    // Every delay of the schedule is a retry, however long the schedule: 5,000 retries 3 ms
    // apart (a loop that reads only the first 100 or 1,000 delays drops the rest).
    let long = [3 * MS; 5_000];
    assert_load("fixed 3 ms, 5,000 retries", &long, 100, WINDOW, rule);
    // A window holds as many retries as arrive in it, beyond any u16 or u32 counter: three
    // billion clients that retry twice at once put six billion retries into window 0.
    let fleet = usize::try_from(3_000_000_000_u64).unwrap_or(usize::MAX / 4);
    let twice_at_once = [Duration::ZERO, Duration::ZERO, 40 * MS];
    assert_load(
        "two immediate retries, then 40 ms, 3,000,000,000 clients",
        &twice_at_once,
        fleet,
        WINDOW,
        rule,
    );
}

#[test]
fn window_boundaries() {
    let rule = "must count an arrival at t in window floor(t / window): an arrival exactly on a \
                boundary k·window belongs to window k (the later one), and one a nanosecond \
                earlier to window k − 1";
    let nano = Duration::from_nanos(1);
    let cases: [(&str, Vec<Duration>); 5] = [
        ("an arrival exactly at 10 ms", vec![10 * MS]),
        ("an arrival 1 ns before 10 ms", vec![10 * MS - nano]),
        ("arrivals at 25, 50 and 75 ms", vec![25 * MS; 3]),
        ("arrivals at 15 and 19 ms", vec![15 * MS, 4 * MS]),
        (
            "arrivals at 19.999999 ms and 30 ms",
            vec![20 * MS - nano, 10 * MS + nano],
        ),
    ];
    for (name, schedule) in cases {
        assert_load(name, &schedule, 100, WINDOW, rule);
    }
    // A window that does not divide the delays: 7 ms windows, arrivals at 3, 6, 9 and 12 s.
    assert_load("7 ms windows", &[3 * S; 4], 100, 7 * MS, rule);
    // Windows that are not whole milliseconds: 2.5 ms (arrivals at 2.5 ms exactly, 1 ns before
    // 5 ms, and 7.5 ms) and 250 µs (an arrival at 1 ms is in window 4).
    let half = Duration::from_micros(2_500);
    assert_load(
        "2.5 ms windows",
        &[half, half - nano, half + nano],
        100,
        half,
        rule,
    );
    // 100 ms windows and arrivals on every boundary: in floating point 0.3 s / 0.1 s is
    // 2.9999999999999996, a hair below the boundary it is exactly on.
    assert_load(
        "100 ms windows, arrivals on 100, 200, …, 700 ms",
        &[100 * MS; 7],
        100,
        100 * MS,
        rule,
    );
    let quarter = Duration::from_micros(250);
    assert_load("250 µs windows", &[MS, 3 * MS], 100, quarter, rule);
    // Windows that are not whole microseconds either: 999 ns windows, arrivals at 999 ns exactly,
    // 1 ns before 1,998 ns, and 2,997 ns + 1 ns.
    let odd = Duration::from_nanos(999);
    assert_load(
        "999 ns windows",
        &[odd, odd - nano, odd + 2 * nano],
        100,
        odd,
        rule,
    );
    // Long windows: 2^52 ns (about 52 days) and an arrival 1 ns before 2^54 ns, in window 3. In
    // f64 that many nanoseconds round up to 2^54, exactly on the boundary of window 4.
    let long = Duration::from_nanos(1 << 52);
    assert_load(
        "2^52 ns windows, an arrival 1 ns before window 4",
        &[Duration::from_nanos((1 << 54) - 1)],
        100,
        long,
        rule,
    );
}

#[test]
fn saturates_arrivals() {
    // Delays near Duration::MAX: the running sum saturates at Duration::MAX instead of
    // panicking, and every saturated arrival lands in the window of Duration::MAX.
    let window = Duration::from_secs(u64::MAX / 4);
    let schedule = [Duration::MAX - S, 2 * S, S];
    assert_load(
        "delays summing past Duration::MAX",
        &schedule,
        2,
        window,
        "must add the delays with saturation: a sum too long for a Duration is Duration::MAX, \
         so all three retries arrive in window 4",
    );
    // Windows of a quarter of Duration::MAX (rounded down), so Duration::MAX itself opens window
    // 4 while Duration::MAX − 1 s is still in window 3: a sum that stops growing when the next
    // delay would overflow stays in window 3 instead of reaching Duration::MAX.
    let quarter = (Duration::MAX.as_nanos() - Duration::MAX.as_nanos() % 4) / 4;
    let window = Duration::new(
        (quarter / 1_000_000_000) as u64,
        (quarter % 1_000_000_000) as u32,
    );
    assert_load(
        "a sum that reaches Duration::MAX",
        &[Duration::MAX - S, 2 * S],
        2,
        window,
        "must add the delays with saturation: the second retry arrives at Duration::MAX, the \
         first moment of window 4, while the first arrives in window 3",
    );
}

#[test]
fn keeps_last_window() {
    // The last case is a storm of three hours in 10 ms windows: 1,080,001 windows, more than
    // a histogram capped at 65,536, 100,000 or a million windows holds.
    let hour = 3_600 * S;
    let cases: [(Vec<Duration>, usize); 4] = [
        (vec![3 * S], 100),
        (vec![25 * MS, 25 * MS], 100),
        (vec![S, S, S], 1),
        (vec![hour, hour, hour], 100),
    ];
    for (schedule, clients) in cases {
        let expected = expected_load(&schedule, clients, WINDOW);
        let got = load(&schedule, clients, WINDOW);
        let total: Duration = schedule.iter().sum();
        assert!(
            got.len() == expected.len() && got.last() == expected.last(),
            "load_per_window(schedule = {}, clients = {clients}, window = 10 ms): the last retry \
             arrives at {}, in window {}, so the result needs {} entries and its last one is \
             {clients}; yours has {} entries, the last one {}",
            list(&schedule),
            exact(total),
            expected.len() - 1,
            expected.len(),
            got.len(),
            got.last().map_or("missing".to_owned(), |n| n.to_string()),
        );
    }
}

#[test]
fn empty_schedule() {
    for clients in [0, 1, 100] {
        let got = load(&[], clients, WINDOW);
        assert!(
            got.is_empty(),
            "an empty schedule means no retries at all, so load_per_window(&[], {clients}, 10 ms) \
             must return an empty Vec; yours returned a Vec of length {}",
            got.len(),
        );
    }
    let got = load(&[20 * MS, 20 * MS], 0, WINDOW);
    assert!(
        got == [0, 0, 0, 0, 0],
        "with clients = 0 nobody arrives, but the windows up to the last retry still exist: \
         load_per_window(&[20 ms, 20 ms], 0, 10 ms) must return [0, 0, 0, 0, 0]; yours returned \
         {got:?}",
    );
}
