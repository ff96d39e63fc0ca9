//! Checks of the compensation's idempotency key: a request of its own, with a key of its own
//! derived from the step's, and a reference to the execution it undoes.

use std::collections::BTreeSet;

use exercise::ErrorKind::{Permanent, Transient};

use super::fixture::{Kind, fails, ok, policy, run_saga};

#[tokio::test(start_paused = true)]
async fn compensation_has_its_own_key() {
    let steps = [
        ok("inventory").compensation_fails(1, Transient),
        ok("payment").compensation_fails(2, Transient),
        fails("shipping", Permanent),
    ];
    let mut compensation_keys = BTreeSet::new();
    for saga in ["order-21", "order-22"] {
        let run = run_saga(saga, &steps, 12, policy()).await;
        for step in ["payment", "inventory"] {
            let executions = run.calls_to(step, Kind::Execute);
            let forward = executions.first().map(|call| call.key.clone());
            let expected = format!("{saga}:{step}");
            assert!(
                forward.as_deref() == Some(expected.as_str()),
                "the execution of {step} in saga {saga} must carry the step's key {expected:?} \
                 (the context of Action::Execute); yours carried {forward:?}",
            );
            let undos = run.calls_to(step, Kind::Compensate);
            let keys: Vec<&str> = undos.iter().map(|call| call.key.as_str()).collect();
            let references: Vec<Option<&str>> =
                undos.iter().map(|call| call.undoes.as_deref()).collect();
            assert!(
                !keys.is_empty() && keys.iter().all(|key| *key != expected),
                "a compensation is a request of its own (a refund is not the charge), and a key \
                 names one request (chapter 20): {step}'s compensation must not carry its \
                 execution's key {expected:?}, or the service answers it with the charge's \
                 saved receipt (or refuses it) and nothing is undone. Yours carried {keys:?}: \
                 use the context of Action::Compensate",
            );
            let distinct: BTreeSet<&str> = keys.iter().copied().collect();
            assert!(
                distinct.len() == 1,
                "every attempt of {step}'s compensation must carry the same key, so the service \
                 can tell a retried refund from a second one; yours carried {keys:?}",
            );
            assert!(
                references
                    .iter()
                    .all(|undoes| *undoes == Some(expected.as_str())),
                "{step}'s compensation must say which execution it undoes, by its key \
                 {expected:?}; your attempts said {references:?}",
            );
            compensation_keys.insert(keys[0].to_owned());
        }
    }
    assert!(
        compensation_keys.len() == 4,
        "each compensation needs a key of its own: two steps in two sagas gave {} distinct \
         compensation keys, {compensation_keys:?}",
        compensation_keys.len(),
    );
}
