//! Running verify's steps side by side: each lane builds in a target folder of its own, the
//! steps are shared out by weight, and the findings print in order as soon as they are ready.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, mpsc};

use anyhow::Result;

use super::findings::{Findings, Message};
use crate::curriculum::workbook::Workbook;

/// One part of a verify whose findings are shown together. It builds in its lane's target
/// folder (see [`crate::build::compile::BuildOptions::lane`]).
pub type Step<'a> = Box<dyn FnOnce(&Workbook, usize, &mut Findings) -> Result<()> + Send + 'a>;

/// The number of cores: one lane of builds and checks each.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// Which lane each step runs in: the heaviest first, each to the lane with the least weight so
/// far. A chapter always lands in the same lane while its weight stays the same, so its builds
/// stay incremental in that lane's target folder.
pub fn assign_lanes(weights: &[usize], lanes: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by_key(|&index| (std::cmp::Reverse(weights[index]), index));
    let mut load = vec![0; lanes.max(1)];
    let mut lane_of = vec![0; weights.len()];
    for index in order {
        let lightest = (0..load.len())
            .min_by_key(|&lane| (load[lane], lane))
            .unwrap_or(0);
        lane_of[index] = lightest;
        load[lightest] += weights[index];
    }
    lane_of
}

/// Runs the steps in `jobs` lanes side by side, and prints each step's findings in order as soon
/// as it and every step before it are done. Each lane builds in a target folder of its own
/// (cargo builds one thing at a time in a folder), and each chapter keeps its own harness and
/// mutant folders, so lanes never share a file or a lock.
pub fn run_steps(
    workbook: &Workbook,
    steps: Vec<(usize, Step)>,
    jobs: usize,
    findings: &mut Findings,
) -> Result<()> {
    if jobs == 1 {
        for (_, step) in steps {
            step(workbook, 0, findings)?;
        }
        return Ok(());
    }
    let weights: Vec<usize> = steps.iter().map(|(weight, _)| *weight).collect();
    let lane_of = assign_lanes(&weights, jobs);
    let mut lanes: Vec<VecDeque<(usize, Step)>> = (0..jobs).map(|_| VecDeque::new()).collect();
    for (index, (_, step)) in steps.into_iter().enumerate() {
        lanes[lane_of[index]].push_back((index, step));
    }
    let lanes = Mutex::new(lanes);
    let (printer, messages) = mpsc::channel::<Message>();
    std::thread::scope(|scope| {
        for lane in 0..jobs {
            let printer = printer.clone();
            let lanes = &lanes;
            scope.spawn(move || {
                while let Some((index, step)) = next_step(lanes, lane) {
                    let mut step_findings = Findings::sent(index, printer.clone());
                    let result = step(workbook, lane, &mut step_findings);
                    step_findings.sent = None;
                    if printer
                        .send(Message::Done(index, step_findings, result))
                        .is_err()
                    {
                        break;
                    }
                }
            });
        }
        drop(printer);
        // The lines of the first unfinished step are printed as they come; later steps' lines
        // wait until every step before them is done.
        let mut waiting: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        let mut done = BTreeMap::new();
        let mut shown = 0;
        let mut first_error = None;
        for message in messages {
            match message {
                Message::Line(index, line) if index == shown => println!("{line}"),
                Message::Line(index, line) => waiting.entry(index).or_default().push(line),
                Message::Done(index, step_findings, result) => {
                    done.insert(index, (step_findings, result));
                }
            }
            while let Some((step_findings, result)) = done.remove(&shown) {
                findings.absorb(step_findings);
                if let Err(error) = result {
                    first_error.get_or_insert(error);
                }
                shown += 1;
                for line in waiting.remove(&shown).unwrap_or_default() {
                    println!("{line}");
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    })
}

/// The next step for `lane`: the first of its own, or else the last of the fullest other lane
/// (its builds start cold in this lane's folder, but the lanes finish together).
pub fn next_step<'a>(
    lanes: &Mutex<Vec<VecDeque<(usize, Step<'a>)>>>,
    lane: usize,
) -> Option<(usize, Step<'a>)> {
    let mut lanes = lanes.lock().expect("a verify lane panicked");
    if let Some(step) = lanes[lane].pop_front() {
        return Some(step);
    }
    let fullest = (0..lanes.len()).max_by_key(|&other| lanes[other].len())?;
    lanes[fullest].pop_back()
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::assign_lanes;

    #[test]
    fn lanes_get_equal_shares_and_keep_them_from_run_to_run() {
        let weights = [10, 64, 20, 36, 35, 2, 10];
        let lanes = assign_lanes(&weights, 2);
        let load = |lane| -> usize {
            weights
                .iter()
                .zip(&lanes)
                .filter(|(_, l)| **l == lane)
                .map(|(w, _)| w)
                .sum()
        };
        assert_eq!(load(0) + load(1), weights.iter().sum::<usize>());
        assert!(load(0).abs_diff(load(1)) <= 10, "{lanes:?}");
        assert_eq!(lanes, assign_lanes(&weights, 2));
    }

    #[test]
    fn a_lane_takes_its_own_steps_first_then_the_last_of_the_fullest_lane() {
        let step =
            |index: usize| -> (usize, super::Step<'static>) { (index, Box::new(|_, _, _| Ok(()))) };
        let lanes = std::sync::Mutex::new(vec![
            VecDeque::from([step(0)]),
            VecDeque::from([step(1), step(2), step(3)]),
        ]);
        let order: Vec<usize> = std::iter::from_fn(|| super::next_step(&lanes, 0))
            .map(|(index, _)| index)
            .collect();
        assert_eq!(order, [0, 3, 2, 1]);
    }

    #[test]
    fn one_lane_takes_everything() {
        assert_eq!(assign_lanes(&[3, 1, 2], 1), vec![0, 0, 0]);
    }
}
