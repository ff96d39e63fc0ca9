//! Checks of the two metrics, on races small enough to work out by hand: every hop takes
//! exactly 10 ms, so every time is a multiple of 10 ms.

use std::time::Duration;

use exercise::{Finish, Run, Strategy};

use super::common::{fixed_race, lab_race, show_finishes};
use super::support::{catch, show};

const MS: Duration = Duration::from_millis(1);

fn calls_of(run: &Run) -> u64 {
    catch(|| run.calls()).unwrap_or_else(|message| panic!("Run::calls panicked: {message}"))
}

fn completion_of(run: &Run) -> Duration {
    catch(|| run.completion_time())
        .unwrap_or_else(|message| panic!("Run::completion_time panicked: {message}"))
}

fn finished(millis: u64, version: u64) -> Option<Finish> {
    let at = Duration::from_millis(millis);
    Some(Finish { at, version })
}

#[test]
fn one_client() {
    let empty = fixed_race(0, Strategy::FullJitter);
    assert!(
        (empty.reads, empty.writes) == (0, 0) && empty.finishes.is_empty(),
        "a race of 0 clients must serve no calls; yours served {} read(s) and {} write(s)",
        empty.reads,
        empty.writes,
    );
    assert_eq!(
        (calls_of(&empty), completion_of(&empty)),
        (0, Duration::ZERO),
        "a race of 0 clients makes 0 calls and is over at time 0",
    );
    for strategy in Strategy::ALL {
        let run = fixed_race(1, strategy);
        let expected = [finished(40, 0)];
        assert!(
            run.finishes == expected && (run.reads, run.writes) == (1, 1),
            "one client alone ({strategy}, every hop 10 ms): its read reaches the row at 10 ms, \
             the version reaches the client at 20 ms, its write reaches the row at 30 ms and \
             the answer \"won\" reaches the client at 40 ms, so it finishes at 40 ms with \
             version 0, after 1 read and 1 write; yours finished {} after {} read(s) and {} \
             write(s)",
            show_finishes(&run.finishes),
            run.reads,
            run.writes,
        );
        assert!(
            calls_of(&run) == 2 && completion_of(&run) == 40 * MS,
            "one client alone: 2 calls (1 read + 1 write), done at 40 ms; your metrics say \
             {} call(s), done at {}",
            calls_of(&run),
            show(completion_of(&run)),
        );
    }
}

#[test]
fn calls_are_reads_plus_writes() {
    let made_up = Run {
        reads: 7,
        writes: 5,
        finishes: Vec::new(),
    };
    assert_eq!(
        calls_of(&made_up),
        12,
        "a run with 7 reads and 5 writes made 12 server calls: both kinds count; your \
         Run::calls() returned {}",
        calls_of(&made_up),
    );
    for (clients, reads) in [(2, 3), (3, 6)] {
        let run = fixed_race(clients, Strategy::NoBackoff);
        assert!(
            (run.reads, run.writes) == (reads, reads),
            "{clients} clients, no backoff, every hop 10 ms: one client wins per round of \
             40 ms and the others read and write again, so the row serves {reads} reads and \
             {reads} writes; yours counted {} reads and {} writes (finishes {})",
            run.reads,
            run.writes,
            show_finishes(&run.finishes),
        );
        assert_eq!(
            calls_of(&run),
            2 * reads,
            "{clients} clients, no backoff: {reads} reads + {reads} writes = {} calls; your \
             Run::calls() returned {}",
            2 * reads,
            calls_of(&run),
        );
    }
}

#[test]
fn completion_is_the_last_finish() {
    // Not in finishing order: the last client in the list is not the last to finish.
    let made_up = Run {
        reads: 3,
        writes: 3,
        finishes: vec![finished(50, 1), finished(20, 0), finished(44, 2)],
    };
    let completion = completion_of(&made_up);
    let diagnosis = if completion == 20 * MS {
        " (the first client to finish)"
    } else if completion == 44 * MS {
        " (the last client in the list, not the last to finish)"
    } else if completion == 38 * MS {
        " (the average)"
    } else {
        ""
    };
    assert!(
        completion == 50 * MS,
        "clients that finished at 50 ms, 20 ms and 44 ms are all done at 50 ms: \
         completion_time() is the latest finish, not the first, the average or the last in the \
         list; yours returned {}{diagnosis}",
        show(completion),
    );
    let run = fixed_race(3, Strategy::NoBackoff);
    let expected = [finished(40, 0), finished(80, 1), finished(120, 2)];
    assert!(
        run.finishes == expected,
        "3 clients, no backoff, every hop 10 ms: one client wins per round of 40 ms, so they \
         finish at 40, 80 and 120 ms with versions 0, 1 and 2; yours finished {}",
        show_finishes(&run.finishes),
    );
    let completion = completion_of(&run);
    assert!(
        completion == 120 * MS,
        "3 clients that finish at 40, 80 and 120 ms are all done at 120 ms; your \
         completion_time() returned {}",
        show(completion),
    );
}

#[test]
fn hops_are_separate_draws() {
    // One client alone on the lab's network finishes after four hops (read there and back, write
    // there and back), each |Normal(10 ms, 2 ms)| drawn afresh: across 2,400 seeds its finish
    // time averages 40 ms with a standard deviation of 2 ms · √4 = 4 ms (the estimates stray by
    // about 0.08 ms and 0.06 ms). A hop drawn once and used both ways of the read makes it
    // 2 ms · √6 ≈ 4.9 ms, both ways of both requests 2 ms · √8 ≈ 5.7 ms; a missing hop makes the
    // mean 30 ms.
    // A simulation that draws in another order than the solution sees other numbers, so the
    // bounds hold for any draws: a correct simulation's spread leaves [3.6, 4.4] with probability
    // 5·10^-12 (chi-square, 2,399 degrees of freedom; with 1,600 seeds it was 1.7·10^-8), its mean
    // leaves [39, 41] with 2·10^-34; the 4.9 ms spread of one hop used both ways comes under 4.4
    // with probability 4·10^-13.
    let times: Vec<f64> = (0..2_400)
        .map(|seed| {
            let run = lab_race(1, Strategy::FullJitter, seed);
            run.finishes
                .first()
                .copied()
                .flatten()
                .map_or(f64::NAN, |finish| finish.at.as_secs_f64() * 1e3)
        })
        .collect();
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let spread =
        (times.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (times.len() - 1) as f64).sqrt();
    assert!(
        (39.0..=41.0).contains(&mean) && (3.6..=4.4).contains(&spread),
        "one client alone on the lab's network finishes after four hops, each drawn afresh \
         from |Normal(10 ms, 2 ms)|: across 2,400 seeds its finish time should average about \
         40 ms with a standard deviation of about 4 ms; yours averaged {mean:.1} ms with a \
         standard deviation of {spread:.1} ms. Draw one `network.delay(rng)` for every hop: the \
         request's way to the row and the answer's way back are two hops"
    );
}

#[test]
fn first_reads_are_separate_hops() {
    // Every client's first read travels its own hop. The first client to finish is the one whose
    // read, answer and write add up to the least (three hops of its own), plus the hop of the
    // answer "you won". With ten clients on the lab's network that first finish averages about
    // 34.67 ms (standard deviation 2.85 ms; over 2,000 seeds the mean strays by about 0.064 ms).
    // One hop drawn once and shared by every first read takes the spread out of that hop, and the
    // first finish comes about 1 ms later, near 35.65 ms (standard deviation 3.28 ms).
    // A simulation that draws in another order than the solution sees other numbers: its mean
    // passes 35.15 ms with probability 2·10^-14 (7.5 standard errors; the old bounds, 1,000 seeds
    // and [34.3, 35.05], failed a correct simulation with probability 3·10^-5), and falls under
    // 34 ms with 4·10^-26; the shared hop's mean stays at or under 35.15 ms with probability
    // 6·10^-12 (normal approximation; the Chernoff bounds are 4·10^-13 and 10^-10).
    let firsts: Vec<f64> = (0..2_000)
        .map(|seed| {
            let run = lab_race(10, Strategy::FullJitter, 7_000 + seed);
            run.finishes
                .iter()
                .flatten()
                .map(|finish| finish.at.as_secs_f64() * 1e3)
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let mean = firsts.iter().sum::<f64>() / firsts.len() as f64;
    assert!(
        (34.0..=35.15).contains(&mean),
        "ten clients on the lab's network each send a first read at time zero, and each read \
         travels its own hop, drawn afresh: across 2,000 seeds the first client to finish should \
         finish after about 34.7 ms on average; yours averaged {mean:.2} ms. Draw one \
         `network.delay(rng)` for every client's first read, not one for all of them"
    );
}
