//! Nothing lost silently: every request is answered exactly once, and the queue follows the
//! page's rules on seeded random workloads.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use rand::RngExt;
use rand::rngs::StdRng;

use exercise::{Order, QueueConfig, Request, ShedReason};

use super::fixture::{config, len, ms, next, order, push, queue, served, shed};
use super::support::seeded;

/// One step of a workload.
#[derive(Debug, Clone, Copy)]
enum Step {
    Push(Request, Duration),
    Next(Duration),
}

/// A seeded workload on a millisecond grid, so that waits and deadlines often fall exactly on
/// the thresholds; it ends by calling `next` until the queue has nothing left.
fn workload(rng: &mut StdRng) -> (QueueConfig, Vec<Step>) {
    let config = config(
        rng.random_range(0..6),
        ms(rng.random_range(0..40)),
        ms(rng.random_range(0..60)),
    );
    let mut now = Duration::ZERO;
    let mut steps = Vec::new();
    for id in 0..rng.random_range(1..60u64) {
        now += ms(rng.random_range(0..12));
        if rng.random_bool(0.6) {
            let request = Request {
                id,
                sent_at: now.saturating_sub(ms(rng.random_range(0..30))),
                deadline: now + ms(rng.random_range(0..80)),
            };
            steps.push(Step::Push(request, now));
        } else {
            steps.push(Step::Next(now));
        }
    }
    for _ in 0..80 {
        now += ms(rng.random_range(0..5));
        steps.push(Step::Next(now));
    }
    (config, steps)
}

/// The page's rules, written plainly: the checks' own reading of section 27.7.
struct Rules {
    config: QueueConfig,
    waiting: VecDeque<(Request, Duration)>,
    order: Order,
}

impl Rules {
    fn push(&mut self, request: Request, now: Duration) -> Result<(), (u64, ShedReason)> {
        if self.waiting.len() >= self.config.max_len {
            return Err((request.id, ShedReason::QueueFull));
        }
        self.waiting.push_back((request, now));
        Ok(())
    }

    fn next(&mut self, now: Duration) -> (Option<u64>, Vec<(u64, ShedReason)>) {
        if let Some((_, arrived)) = self.waiting.front()
            && now - *arrived > self.config.lifo_after
        {
            self.order = Order::Lifo;
        }
        let mut shed = Vec::new();
        let mut kept = VecDeque::new();
        for (request, arrived) in self.waiting.drain(..) {
            if now >= request.deadline {
                shed.push((request.id, ShedReason::DeadlinePassed));
            } else if now - arrived > self.config.max_wait {
                shed.push((request.id, ShedReason::WaitedTooLong));
            } else {
                kept.push_back((request, arrived));
            }
        }
        self.waiting = kept;
        let serve = match self.order {
            Order::Fifo => self.waiting.pop_front(),
            Order::Lifo => self.waiting.pop_back(),
        };
        if self.waiting.is_empty() {
            self.order = Order::Fifo;
        }
        shed.sort();
        (serve.map(|(request, _)| request.id), shed)
    }
}

fn describe(steps: &[Step], upto: usize) -> String {
    let start = upto.saturating_sub(8);
    let lines: Vec<String> = steps[start..=upto]
        .iter()
        .map(|step| match step {
            Step::Push(request, now) => format!(
                "push(id {}, deadline {:?}) at {now:?}",
                request.id, request.deadline
            ),
            Step::Next(now) => format!("next at {now:?}"),
        })
        .collect();
    lines.join("; ")
}

#[test]
fn every_request_is_answered_exactly_once() {
    let mut rng = seeded(27);
    for run in 0..300 {
        let (config, steps) = workload(&mut rng);
        let mut queue = queue(config);
        let mut answers: BTreeMap<u64, u32> = BTreeMap::new();
        let mut pushed = Vec::new();
        for step in &steps {
            match *step {
                Step::Push(request, now) => {
                    pushed.push(request.id);
                    if let Err(answer) = push(&mut queue, request, now) {
                        *answers.entry(answer.id).or_default() += 1;
                    }
                }
                Step::Next(now) => {
                    let next = next(&mut queue, now);
                    for id in served(&next)
                        .into_iter()
                        .chain(next.shed.iter().map(|answer| answer.id))
                    {
                        *answers.entry(id).or_default() += 1;
                    }
                }
            }
        }
        let lost: Vec<u64> = pushed
            .iter()
            .copied()
            .filter(|id| !answers.contains_key(id))
            .collect();
        let twice: Vec<(u64, u32)> = answers
            .iter()
            .filter(|&(_, &n)| n > 1)
            .map(|(&id, &n)| (id, n))
            .collect();
        let strangers: Vec<u64> = answers
            .keys()
            .copied()
            .filter(|id| !pushed.contains(id))
            .collect();
        // The pitfall that fits what went wrong: an answer missing, or one too many.
        let pitfall = if lost.is_empty() && len(&queue) == 0 {
            "answered twice"
        } else {
            "dropped silently"
        };
        assert!(
            lost.is_empty() && twice.is_empty() && strangers.is_empty() && len(&queue) == 0,
            "workload {run} ({config:?}, {} pushes, then next until the queue empties): every \
             request must be answered exactly once, refused by push, served by next, or \
             answered in next's shed list. Never answered: {lost:?}; answered more than once \
             (id, times): {twice:?}; answers to ids never pushed: {strangers:?}; still queued at \
             the end: {} (see pitfall \"{pitfall}\")",
            pushed.len(),
            len(&queue)
        );
    }
}

#[test]
fn follows_the_rules_on_random_workloads() {
    let mut rng = seeded(2_027);
    for run in 0..400 {
        let (config, steps) = workload(&mut rng);
        let mut queue = queue(config);
        let mut rules = Rules {
            config,
            waiting: VecDeque::new(),
            order: Order::Fifo,
        };
        for (i, step) in steps.iter().enumerate() {
            match *step {
                Step::Push(request, now) => {
                    let got = push(&mut queue, request, now).map_err(|a| (a.id, a.reason));
                    let want = rules.push(request, now);
                    assert_eq!(
                        got,
                        want,
                        "workload {run} ({config:?}), after: {}: push answered {got:?}, the \
                         rules say {want:?}",
                        describe(&steps, i)
                    );
                }
                Step::Next(now) => {
                    let next = next(&mut queue, now);
                    let got = (served(&next), shed(&next), order(&queue), len(&queue));
                    let (serve, dropped) = rules.next(now);
                    let want = (serve, dropped, rules.order, rules.waiting.len());
                    assert_eq!(
                        got,
                        want,
                        "workload {run} ({config:?}), after: {}: next served, shed (sorted), \
                         left the order and the length as {got:?}; the rules of section 27.7 \
                         say {want:?}",
                        describe(&steps, i)
                    );
                }
            }
        }
    }
}
