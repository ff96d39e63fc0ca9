//! The checks of chapter 18, written once against `Db` and run on both databases by `sqlite.rs`
//! and `postgres.rs`. Each function is one check's whole scenario; it panics with the
//! learner-facing message when the store breaks a rule. No checks live here.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use exercise::{Millis, OutboxRow, OutboxStore, Status};

use super::fixture::{
    Db, LEASE, MINUTE, MS, SECOND, Seed, T0, at, at_opt, claim, ids, ids_of, lease, many_rows,
    mark_sent, reschedule, row_in, span,
};

/// A day, for leases far longer than the checks' usual 30 s.
const DAY: Millis = 24 * 60 * MINUTE;

/// Only pending rows whose `next_retry_at` has come (or is NULL) are claimed.
pub fn claims_only_due_rows<D: Db>(db: &D) {
    let base = T0 - MINUTE;
    db.seed(&[
        Seed::new(1, base),
        Seed::retry_at(2, base + 1, 1, T0 + MS),
        Seed::retry_at(3, base + 2, 2, T0),
        Seed::new(4, base + 3).with_status(Status::Sent),
        Seed::new(5, base + 4).with_status(Status::Failed),
        Seed::retry_at(6, base + 5, 1, T0 - 5 * SECOND),
        Seed::retry_at(7, base + 6, 3, T0 + MINUTE),
        // Done rows whose schedule and old lease say "due and free": only the status tells them
        // from row 6. A claim whose ORs lost their parentheses takes them.
        Seed::retry_at(8, base + 5, 1, T0 - 5 * SECOND).with_status(Status::Sent),
        Seed::retry_at(9, base + 5, 4, T0 - 5 * SECOND)
            .with_status(Status::Failed)
            .leased("old", T0 - SECOND),
    ]);
    let before = db.rows();
    let claimed = claim(&mut *db.main(), "a", T0, LEASE, 10);
    let got: BTreeSet<i64> = ids_of(&claimed).into_iter().collect();
    for row in &before {
        let due = row.status == Status::Pending && row.next_retry_at.is_none_or(|t| t <= T0);
        let why = match (row.status, row.next_retry_at) {
            (Status::Pending, None) => "pending and never tried (next_retry_at NULL)".to_owned(),
            (Status::Pending, Some(t)) => format!("pending with next_retry_at = {}", at(t)),
            (status, _) => format!("status '{status}'"),
        };
        if due && !got.contains(&row.id) {
            panic!(
                "at now = T0 with limit 10, {} claimed rows {} but not row {}, which is {why}: it \
                 is due (next_retry_at NULL or <= now) and must be claimed",
                db.name(),
                ids(&ids_of(&claimed)),
                row.id,
            );
        }
        if !due && got.contains(&row.id) {
            let rule = if row.status == Status::Pending {
                "a row whose next_retry_at is later than now is not due yet"
            } else {
                "only pending rows are ever claimed"
            };
            panic!(
                "at now = T0, your claim took row {}, which is {why}: {rule} ({} claimed {})",
                row.id,
                db.name(),
                ids(&ids_of(&claimed)),
            );
        }
    }
}

/// The oldest due rows come first, at most `limit` per claim, returned in due order.
pub fn claims_oldest_first_up_to_limit<D: Db>(db: &D) {
    // Due order: COALESCE(next_retry_at, created_at), then created_at, then id. Rows 5 and 6
    // tie on both times, and the second claim's limit falls between them: only the id decides.
    let base = T0 - MINUTE;
    db.seed(&[
        Seed::new(1, base + 40 * SECOND),
        Seed::retry_at(2, base, 1, base + 50 * SECOND),
        Seed::new(3, base + 10 * SECOND),
        Seed::retry_at(4, base + 5 * SECOND, 2, base + 20 * SECOND),
        Seed::new(5, base + 30 * SECOND),
        Seed::new(6, base + 30 * SECOND),
        Seed::retry_at(7, base + SECOND, 1, base + 30 * SECOND),
        Seed::new(8, base + 2 * SECOND),
    ]);
    let expected_order = [8, 3, 4, 7, 5, 6, 1, 2];
    let mut store = db.main();
    let mut taken = Vec::new();
    for (worker, limit) in [("a", 3), ("b", 2), ("c", 10)] {
        let claimed = ids_of(&claim(&mut *store, worker, T0, LEASE, limit));
        let start = taken.len().min(expected_order.len());
        let end = (start + limit).min(expected_order.len());
        let expected = &expected_order[start..end];
        let mut same_rows = claimed.clone();
        same_rows.sort_unstable();
        let mut wanted = expected.to_vec();
        wanted.sort_unstable();
        let why = if same_rows == wanted {
            "the right rows in another order: sort what RETURNING gives back with \
             OutboxRow::due_order"
        } else if claimed.len() > limit {
            "more rows than the limit: LIMIT ?4 belongs inside the subquery, next to its ORDER BY"
        } else if claimed.iter().any(|id| taken.contains(id)) {
            "rows an earlier claim holds under a valid lease: they are not free until \
             locked_until (and a lease only counts once it is committed, with locked_until = now \
             + lease_ms)"
        } else {
            "other rows: of all the rows that are pending, due (next_retry_at NULL or <= now) \
             and free, the subquery takes the first of the due order, ORDER BY \
             COALESCE(next_retry_at, created_at), created_at, id, before its LIMIT"
        };
        assert!(
            claimed == expected,
            "after claims that took {} already, worker {worker:?} claimed with limit {limit} and \
             got rows {}; expected {} (the {} oldest due rows, in the order \
             COALESCE(next_retry_at, created_at), created_at, id). Yours are {why}",
            ids(&taken),
            ids(&claimed),
            ids(expected),
            expected.len(),
        );
        taken.extend(claimed);
    }
    let none = claim(&mut *store, "d", T0, LEASE, 0);
    assert!(
        none.is_empty(),
        "a claim with limit 0 must take nothing; yours took rows {}",
        ids(&ids_of(&none))
    );
    // The limit is the caller's, however large: a backlog of 2,500 more rows, claimed 2,000 and
    // then up to 5,000 at a time, past any round number (100, 1,000, 1,024) a store might keep
    // as a ceiling of its own.
    let backlog: Vec<Seed> = (101..=2_600)
        .map(|id| Seed::new(id, base + 50 * SECOND + id))
        .collect();
    D::seed_with(&mut *store, &backlog);
    for (worker, limit, first, last) in [("e", 2_000, 101, 2_100), ("f", 5_000, 2_101, 2_600)] {
        let claimed = ids_of(&claim(&mut *store, worker, T0, LEASE, limit));
        assert!(
            claimed.iter().copied().eq(first..=last),
            "with 2,500 more rows due (ids 101 to 2600, oldest first), worker {worker:?} claimed \
             with limit {limit} and got {} row(s){}; expected rows {first} to {last}, the {} \
             oldest free rows, in due order. The limit is the caller's, with no ceiling of the \
             store's own",
            claimed.len(),
            match (claimed.first(), claimed.last()) {
                (Some(low), Some(high)) => format!(", rows {low} to {high}"),
                _ => String::new(),
            },
            last - first + 1,
        );
    }
}

/// `claim_sql()` is public, and its contract names its parameters: worker, end of the lease,
/// now, limit. Run on its own with exactly those, at the edges: a row due at exactly now and one
/// a millisecond later, a lease that ends at exactly now and one a millisecond later, and a limit
/// below the number of free due rows.
pub fn claim_sql_keeps_its_parameters<D: Db>(db: &D) {
    let base = T0 - MINUTE;
    let seeds = [
        Seed::retry_at(1, base, 1, T0),
        Seed::retry_at(2, base, 1, T0 + MS),
        Seed::new(3, base + SECOND).leased("old", T0),
        Seed::new(4, base).leased("x", T0 + MS),
        Seed::new(5, base - MINUTE),
        Seed::new(6, base - 2 * MINUTE).with_status(Status::Sent),
    ];
    db.seed(&seeds);
    let until = T0 + LEASE;
    let mut store = db.main();
    let call = |limit: i64| {
        format!(
            "{}'s claim_sql() run on its own with its documented parameters (worker \"w\", end \
             of the lease {}, now {}, limit {limit}; claim_due may bind them in another order, \
             this check does not)",
            db.name(),
            at(until),
            at(T0),
        )
    };
    let rounds = [
        (
            2,
            vec![5, 3],
            "At now, rows 5 and 3 are the oldest free due rows (row 3's old lease ends at exactly \
             now, so it is over), row 1 is due at exactly now, row 2 a millisecond later, row 4's \
             lease still holds for a millisecond, and row 6 is sent",
        ),
        (
            10,
            vec![1],
            "Rows 5 and 3 now hold this worker's lease from the first run; of the rest only row 1 \
             is due and free (row 2 is due a millisecond later, row 4's lease holds, row 6 is \
             sent)",
        ),
    ];
    for (limit, expected, situation) in rounds {
        let mut got = D::run_claim_sql(&mut *store, "w", until, T0, limit)
            .unwrap_or_else(|error| panic!("{}: {error}", call(limit)));
        got.sort_by_key(OutboxRow::due_order);
        let table = D::rows_with(&mut *store);
        assert!(
            ids_of(&got) == expected,
            "{} returned rows {}; expected {}. {situation}. The table now says: {}",
            call(limit),
            ids(&ids_of(&got)),
            ids(&expected),
            table
                .iter()
                .map(|row| format!("row {} {}", row.id, lease(row)))
                .collect::<Vec<_>>()
                .join("; "),
        );
        for row in &got {
            let stored = table.iter().find(|stored| stored.id == row.id);
            assert!(
                stored.is_some_and(|stored| stored.locked_by.as_deref() == Some("w")
                    && stored.locked_until == Some(until))
                    && row.locked_until == Some(until),
                "{} returned row {} with {}; the table holds {}. The lease is locked_by = the \
                 worker (the first parameter), locked_until = the end of the lease (the second)",
                call(limit),
                row.id,
                lease(row),
                stored.map_or_else(|| "no such row".to_owned(), lease),
            );
        }
    }
}

/// The claim writes `locked_by = worker` and `locked_until = now + lease_ms`, returns the rows
/// as they are after the claim, and commits: the table agrees with what was returned.
pub fn writes_the_lease<D: Db>(db: &D) {
    db.seed(&[
        Seed::new(1, T0 - 3 * SECOND),
        Seed::retry_at(2, T0 - 2 * SECOND, 2, T0 - SECOND),
        Seed::new(3, T0 - SECOND),
    ]);
    let now = T0 + 7 * SECOND;
    let lease_ms = 45 * SECOND;
    let claimed = claim(&mut *db.main(), "relay-7", now, lease_ms, 10);
    assert!(
        claimed.len() == 3,
        "3 rows were due at {}, and the claim with limit 10 returned {} row(s): {}",
        at(now),
        claimed.len(),
        ids(&ids_of(&claimed)),
    );
    for row in &claimed {
        assert!(
            row.locked_by.as_deref() == Some("relay-7") && row.locked_until == Some(now + lease_ms),
            "claim_due(worker = \"relay-7\", now = {}, lease_ms = 45 s) returned row {} with {}; \
             expected locked_by = \"relay-7\", locked_until = {} (now + lease_ms): return the \
             rows as the UPDATE left them (RETURNING)",
            at(now),
            row.id,
            lease(row),
            at(now + lease_ms),
        );
    }
    for row in db.rows() {
        let expected_retry = if row.id == 2 { Some(T0 - SECOND) } else { None };
        let expected_attempts = if row.id == 2 { 2 } else { 0 };
        assert!(
            row.locked_by.as_deref() == Some("relay-7") && row.locked_until == Some(now + lease_ms),
            "after claim_due returned, {} holds row {} with {}; expected locked_by = \
             \"relay-7\", locked_until = {}. A lease that is not committed protects nothing: \
             commit the claim's transaction",
            db.name(),
            row.id,
            lease(&row),
            at(now + lease_ms),
        );
        assert!(
            row.status == Status::Pending
                && row.attempts == expected_attempts
                && row.next_retry_at == expected_retry,
            "a claim writes only locked_by and locked_until; after it, row {} has status '{}', \
             attempts {}, next_retry_at {} (it had 'pending', {expected_attempts}, {})",
            row.id,
            row.status,
            row.attempts,
            at_opt(row.next_retry_at),
            at_opt(expected_retry),
        );
    }
    // The lease is as long as the caller asks, with no ceiling of the store's own (a minute,
    // an hour, a day, i32::MAX milliseconds): 30 days, while rows 1 to 3 are still held.
    db.seed(&[Seed::new(4, T0)]);
    let later = now + SECOND;
    let long = 30 * DAY;
    let claimed = claim(&mut *db.main(), "relay-8", later, long, 10);
    let table = db.row(4);
    assert!(
        ids_of(&claimed) == [4]
            && claimed[0].locked_until == Some(later + long)
            && table.locked_until == Some(later + long),
        "claim_due(worker = \"relay-8\", now = {}, lease_ms = 30 days) should lease row 4 until \
         {} (now + lease_ms); it returned {} and the table holds row 4 with {}",
        at(later),
        at(later + long),
        match claimed.first() {
            Some(row) => format!("row {} with {}", row.id, lease(row)),
            None => "no row".to_owned(),
        },
        lease(&table),
    );
}

/// Rows under a valid lease are not claimed by anyone else, up to the last millisecond.
pub fn skips_rows_under_a_valid_lease<D: Db>(db: &D) {
    let mut seeds = many_rows(8);
    // Row 9: leased by a worker of an earlier run, until one millisecond after T0.
    seeds.push(Seed::new(9, T0 - 2 * MINUTE).leased("ghost", T0 + MS));
    db.seed(&seeds);
    let mut store = db.main();
    let first = claim(&mut *store, "a", T0, LEASE, 3);
    // The holder itself claims again while its lease runs: its own rows are not free either.
    let again = claim(&mut *store, "a", T0, LEASE, 3);
    let regained: Vec<i64> = ids_of(&again)
        .into_iter()
        .filter(|id| ids_of(&first).contains(id))
        .collect();
    if !regained.is_empty() {
        // What the table says of the first claim's lease tells the causes apart.
        let stored = row_in::<D>(&mut *store, regained[0]);
        let why = match (stored.locked_by.as_deref(), stored.locked_until) {
            (None, _) | (_, None) => format!(
                "the table holds no lease on row {} after the first claim: a lease that is not \
                 committed protects nothing",
                stored.id
            ),
            (_, Some(until)) if until <= T0 => format!(
                "the first claim's lease on row {} ends at {}, when it should run to now + \
                 lease_ms: a lease born expired protects nothing",
                stored.id,
                at(until)
            ),
            _ => "a row under a valid lease is not free, not even for its holder (a second \
                  claim would renew the lease and hand the same rows to a second batch)"
                .to_owned(),
        };
        panic!(
            "worker \"a\" claimed {} at T0 with a 30 s lease, then claimed again at once and \
             got {} back among {}: {why}",
            ids(&ids_of(&first)),
            ids(&regained),
            ids(&ids_of(&again)),
        );
    }
    let first: Vec<OutboxRow> = first.into_iter().chain(again).collect();
    let second = claim(&mut *store, "b", T0, LEASE, 10);
    let later = claim(&mut *store, "c", T0 + LEASE - MS, LEASE, 10);
    let held: BTreeMap<i64, (&str, Millis)> = first
        .iter()
        .map(|row| (row.id, ("a", T0 + LEASE)))
        .chain([(9, ("ghost", T0 + MS))])
        .collect();
    for (worker, now, rows) in [("b", T0, &second), ("c", T0 + LEASE - MS, &later)] {
        for row in rows.iter() {
            if let Some((holder, until)) = held.get(&row.id).filter(|(_, until)| *until > now) {
                panic!(
                    "worker {worker:?} claimed row {} at {}, while worker {holder:?}'s lease on \
                     it runs until {}: a row whose locked_until is later than now belongs to \
                     its holder (worker \"a\" had claimed {})",
                    row.id,
                    at(now),
                    at(*until),
                    ids(&ids_of(&first)),
                );
            }
        }
    }
    let free: Vec<i64> = (1..=8).filter(|id| !held.contains_key(id)).collect();
    assert!(
        ids_of(&second) == free,
        "worker \"a\" claimed {} at T0; worker \"b\", claiming right after with limit 10, should \
         get the other free rows {}, but got {}",
        ids(&ids_of(&first)),
        ids(&free),
        ids(&ids_of(&second)),
    );
}

/// A lease that has run out (`locked_until <= now`) frees the row for any worker.
pub fn reclaims_expired_leases<D: Db>(db: &D) {
    db.seed(&[
        Seed::new(1, T0 - 3 * SECOND).leased("crashed", T0 - MS),
        Seed::new(2, T0 - 2 * SECOND).leased("crashed", T0),
        Seed::new(3, T0 - SECOND).leased("slow", T0 + MS),
    ]);
    let claimed = claim(&mut *db.main(), "b", T0, LEASE, 10);
    assert!(
        ids_of(&claimed) == [1, 2],
        "at now = T0, row 1's lease ended at T0 - 1 ms and row 2's at T0 (a lease is valid only \
         while now < locked_until), while row 3's runs to T0 + 1 ms; worker \"b\" should reclaim \
         rows [1, 2], but claimed {}",
        ids(&ids_of(&claimed)),
    );
    for row in &claimed {
        assert!(
            row.locked_by.as_deref() == Some("b") && row.locked_until == Some(T0 + LEASE),
            "a reclaimed row gets a fresh lease for its new worker; row {} came back with {}, \
             expected locked_by = \"b\", locked_until = {}",
            row.id,
            lease(row),
            at(T0 + LEASE),
        );
    }
}

/// `mark_sent` works only for the worker that holds the row's lease.
pub fn mark_sent_requires_the_lease<D: Db>(db: &D) {
    db.seed(&many_rows(3));
    let mut store = db.main();
    claim(&mut *store, "a", T0, LEASE, 3);
    let sent = mark_sent(&mut *store, 1, "a", T0 + SECOND);
    let row = row_in::<D>(&mut store, 1);
    assert!(
        sent && row.status == Status::Sent && row.sent_at == Some(T0 + SECOND),
        "worker \"a\" holds row 1 until T0 + 30 s; mark_sent(1, \"a\", T0 + 1 s) should return \
         true and leave status 'sent', sent_at = T0 + 1 s; it returned {sent} and the row has \
         status '{}', sent_at = {}",
        row.status,
        at_opt(row.sent_at),
    );
    assert!(
        row.locked_by.is_none() && row.locked_until.is_none(),
        "a sent row has no lease any more; row 1 still has {}",
        lease(&row)
    );
    let again = mark_sent(&mut *store, 1, "a", T0 + 2 * SECOND);
    assert!(
        !again,
        "row 1 is already sent; marking it again must return false, yours returned true"
    );
    let intruder = mark_sent(&mut *store, 2, "b", T0 + 2 * SECOND);
    let row = row_in::<D>(&mut store, 2);
    assert!(
        !intruder && row.status == Status::Pending,
        "row 2 is leased to worker \"a\"; mark_sent(2, \"b\", T0 + 2 s) must return false and \
         change nothing, but it returned {intruder} and the row now has status '{}'",
        row.status,
    );
    // Worker "a" stalls past its lease; worker "b" reclaims rows 2 and 3.
    let reclaimed = claim(&mut *store, "b", T0 + 31 * SECOND, LEASE, 10);
    assert!(
        ids_of(&reclaimed) == [2, 3],
        "at T0 + 31 s worker \"a\"'s lease (until T0 + 30 s) had expired, so worker \"b\" should \
         reclaim rows [2, 3]; it got {}",
        ids(&ids_of(&reclaimed)),
    );
    let late = mark_sent(&mut *store, 2, "a", T0 + 32 * SECOND);
    let row = row_in::<D>(&mut store, 2);
    assert!(
        !late && row.status == Status::Pending && row.locked_by.as_deref() == Some("b"),
        "worker \"a\" lost row 2 when its lease expired and worker \"b\" reclaimed it; a late \
         mark_sent(2, \"a\", T0 + 32 s) must return false and leave the row to \"b\", but it \
         returned {late} and the row has status '{}', {}",
        row.status,
        lease(&row),
    );
    assert!(
        !mark_sent(&mut *store, 999, "a", T0 + 32 * SECOND),
        "mark_sent of a row that does not exist (id 999) must return false"
    );
    // A row given up on (failed) while "a" still held a valid lease on it: the lease alone does
    // not make it markable; only a pending row can be sent.
    D::seed_with(
        &mut *store,
        &[Seed::new(4, T0 - MINUTE)
            .with_status(Status::Failed)
            .leased("a", T0 + MINUTE)],
    );
    let revived = mark_sent(&mut *store, 4, "a", T0 + 32 * SECOND);
    let row = row_in::<D>(&mut store, 4);
    assert!(
        !revived && row.status == Status::Failed && row.sent_at.is_none(),
        "row 4 is 'failed' (given up on), though worker \"a\" still holds a valid lease on it; \
         mark_sent(4, \"a\", T0 + 32 s) must return false and leave it failed (only a pending \
         row can be marked sent), but it returned {revived} and the row has status '{}', \
         sent_at {}",
        row.status,
        at_opt(row.sent_at),
    );
}

/// An expired lease cannot complete, even before anyone has reclaimed the row.
pub fn expired_lease_cannot_mark<D: Db>(db: &D) {
    db.seed(&many_rows(4));
    let mut store = db.main();
    claim(&mut *store, "a", T0, LEASE, 4);
    // The last millisecond of the lease still belongs to its holder, for both ways out.
    let last_ms = T0 + LEASE - MS;
    let sent = mark_sent(&mut *store, 3, "a", last_ms);
    let given_back = reschedule(&mut *store, 4, "a", last_ms, T0 + MINUTE, "timeout");
    let (three, four) = (row_in::<D>(&mut store, 3), row_in::<D>(&mut store, 4));
    assert!(
        sent && three.status == Status::Sent && given_back && four.attempts == 1,
        "worker \"a\"'s leases run until T0 + 30 s, so at T0 + 29.999 s they are still valid: \
         mark_sent(3, \"a\", T0 + 29.999 s) and reschedule(4, \"a\", T0 + 29.999 s, …) must \
         both succeed; they returned {sent} and {given_back} (row 3 '{}', row 4 attempts {})",
        three.status,
        four.attempts,
    );
    let sent = mark_sent(&mut *store, 1, "a", T0 + LEASE);
    let row = row_in::<D>(&mut store, 1);
    assert!(
        !sent && row.status == Status::Pending,
        "worker \"a\"'s lease on row 1 ended at T0 + 30 s; mark_sent(1, \"a\", T0 + 30 s) must \
         return false (the lease is valid only while now < locked_until; from then on the row \
         may be claimed by another worker at any moment), but it returned {sent} and the row has \
         status '{}'",
        row.status,
    );
    let given_back = reschedule(&mut *store, 2, "a", T0 + LEASE, T0 + MINUTE, "timeout");
    let row = row_in::<D>(&mut store, 2);
    assert!(
        !given_back && row.attempts == 0 && row.next_retry_at.is_none(),
        "worker \"a\"'s lease on row 2 ended at T0 + 30 s; reschedule(2, \"a\", T0 + 30 s, …) \
         must return false and change nothing, as mark_sent must (the lease is valid only while \
         now < locked_until), but it returned {given_back} and the row has attempts {}, \
         next_retry_at {}",
        row.attempts,
        at_opt(row.next_retry_at),
    );
    let reclaimed = claim(&mut *store, "b", T0 + LEASE, LEASE, 10);
    assert!(
        ids_of(&reclaimed) == [1, 2],
        "both rows are still pending and their lease ended at T0 + 30 s, so worker \"b\" should \
         claim [1, 2] then; it got {}",
        ids(&ids_of(&reclaimed)),
    );
}

/// `reschedule` records the failed attempt and gives the row back: no lease, due again at
/// `next_retry_at`, and only for the lease holder.
pub fn reschedule_gives_the_row_back<D: Db>(db: &D) {
    // Row 1 has failed twice before: reschedule counts one more, it does not restart the count.
    let mut seeds = many_rows(2);
    seeds[0] = Seed::retry_at(1, T0 - MINUTE + 1, 2, T0 - SECOND);
    db.seed(&seeds);
    let mut store = db.main();
    claim(&mut *store, "a", T0, LEASE, 2);
    // The broker's whole answer, longer than a status line: stored as given, not cut.
    let error = "503 Service Unavailable: upstream connect error or disconnect/reset before \
                 headers, reset reason: connection termination";
    let done = reschedule(&mut *store, 1, "a", T0 + SECOND, T0 + 10 * SECOND, error);
    let row = row_in::<D>(&mut store, 1);
    assert!(
        done && row.status == Status::Pending
            && row.attempts == 3
            && row.last_attempt_at == Some(T0 + SECOND)
            && row.sent_at.is_none()
            && row.next_retry_at == Some(T0 + 10 * SECOND)
            && row.last_error.as_deref() == Some(error),
        "row 1 had failed twice; reschedule(1, \"a\", now = T0 + 1 s, next_retry_at = T0 + 10 s, \
         {error:?}) by the lease holder should return true and leave: pending, attempts 3 (one \
         more than before), last_attempt_at T0 + 1 s, \
         next_retry_at T0 + 10 s, last_error {error:?}. It returned {done}; the row has '{}', \
         attempts {}, last_attempt_at {}, next_retry_at {}, last_error {:?}",
        row.status,
        row.attempts,
        at_opt(row.last_attempt_at),
        at_opt(row.next_retry_at),
        row.last_error,
    );
    assert!(
        row.locked_by.is_none() && row.locked_until.is_none(),
        "a rescheduled row is given back: its lease must be cleared, or nobody can retry it \
         before the old lease runs out (T0 + 30 s). Row 1 still has {}",
        lease(&row),
    );
    let intruder = reschedule(&mut *store, 2, "b", T0 + SECOND, T0 + 10 * SECOND, error);
    let row = row_in::<D>(&mut store, 2);
    assert!(
        !intruder && row.attempts == 0 && row.locked_by.as_deref() == Some("a"),
        "row 2 is leased to worker \"a\"; reschedule(2, \"b\", …) must return false and change \
         nothing, but it returned {intruder} and the row has attempts {}, {}",
        row.attempts,
        lease(&row),
    );
    let early = claim(&mut *store, "c", T0 + 10 * SECOND - MS, LEASE, 10);
    assert!(
        early.is_empty(),
        "row 1 was rescheduled for T0 + 10 s and row 2 is leased to \"a\"; a claim at \
         T0 + 9.999 s must take nothing, but took {}",
        ids(&ids_of(&early)),
    );
    let due = claim(&mut *store, "c", T0 + 10 * SECOND, LEASE, 10);
    assert!(
        ids_of(&due) == [1],
        "row 1 was rescheduled for T0 + 10 s and its lease given back, so a claim at T0 + 10 s \
         must take it (and only it: row 2 is still leased to \"a\"); it took {}",
        ids(&ids_of(&due)),
    );
    // A row given up on (failed) while "a" still held a valid lease on it: the lease alone does
    // not let reschedule bring it back; only a pending row is rescheduled.
    D::seed_with(
        &mut *store,
        &[Seed::new(4, T0 - MINUTE)
            .with_status(Status::Failed)
            .leased("a", T0 + MINUTE)],
    );
    let revived = reschedule(
        &mut *store,
        4,
        "a",
        T0 + 11 * SECOND,
        T0 + 20 * SECOND,
        error,
    );
    let row = row_in::<D>(&mut store, 4);
    assert!(
        !revived
            && row.status == Status::Failed
            && row.attempts == 0
            && row.next_retry_at.is_none(),
        "row 4 is 'failed' (given up on), though worker \"a\" still holds a valid lease on it; \
         reschedule(4, \"a\", T0 + 11 s, …) must return false and change nothing (only a \
         pending row is rescheduled), but it returned {revived} and the row has status '{}', \
         attempts {}, next_retry_at {}",
        row.status,
        row.attempts,
        at_opt(row.next_retry_at),
    );
}

// ---------------------------------------------------------------------------------------------
// Four workers on one outbox, after a fifth one crashed. One run serves four checks.

/// The workers of the run, each on its own connection and thread.
const WORKERS: [&str; 4] = ["w1", "w2", "w3", "w4"];
/// The worker that claims a batch before the others start, publishes part of it, and dies.
const CRASHER: &str = "crasher";
const ROWS: i64 = 1_000;
const BATCH: usize = 25;
/// The crasher's batch, and how many of its rows it published before it died.
const CRASH_BATCH: usize = 50;
const PUBLISHED_BEFORE_CRASH: usize = 10;
/// Long against a batch (25 publishes of 1 ms each, while three other workers also move the
/// clock), so in a correct run a lease runs out only when its worker has stopped.
const WORKER_LEASE: Millis = 5 * SECOND;
/// Virtual time a worker lets pass when it finds nothing to claim.
const IDLE: Millis = 250 * MS;
/// A run that has not emptied the outbox by then never will.
const GIVE_UP_AT: Millis = T0 + 10 * MINUTE;

/// A lease as a worker received it: `[from, until)` on the shared clock, cut short when the
/// worker gave the row back (sent or rescheduled) before it ran out.
#[derive(Clone, Debug)]
pub struct Held {
    id: i64,
    worker: &'static str,
    from: Millis,
    until: Millis,
}

/// What the broker saw: a publish of `id` by `worker` at `at`, and whether it refused it.
#[derive(Clone, Debug)]
pub struct Publish {
    id: i64,
    worker: &'static str,
    refused: bool,
}

/// Everything a run leaves behind for the checks to judge.
#[derive(Debug)]
pub struct Report {
    /// "4 workers on one SQLite outbox of 1000 rows …", for messages.
    setting: String,
    held: Vec<Held>,
    broker: Vec<Publish>,
    rows: Vec<OutboxRow>,
    /// The rows the crasher held when it died; the first ten of them it had published.
    crashed: Vec<i64>,
    /// The shared clock when the last worker stopped.
    ended_at: Millis,
    /// Whether the workers stopped because the outbox was empty (not because time ran out).
    emptied: bool,
}

/// The shared state of a run: the clock every worker reads and moves, the broker's log, the
/// leases handed out, and the first error any worker met.
struct Run {
    clock: AtomicI64,
    done: AtomicBool,
    emptied: AtomicBool,
    broker: Mutex<Vec<Publish>>,
    held: Mutex<Vec<Held>>,
    trouble: Mutex<Option<String>>,
}

impl Run {
    /// Moves the clock on by `step` and returns the new time.
    fn tick(&self, step: Millis) -> Millis {
        self.clock.fetch_add(step, Ordering::SeqCst) + step
    }

    fn stop(&self) {
        self.done.store(true, Ordering::SeqCst);
    }

    fn fail(&self, message: String) {
        self.trouble.lock().unwrap().get_or_insert(message);
        self.stop();
    }
}

/// The broker refuses the first attempt of every seventh row (a transient 503).
fn broker_refuses(row: &OutboxRow) -> bool {
    row.id % 7 == 0 && row.attempts == 0
}

/// One worker: claim a batch, publish each row, mark it sent or reschedule it; until the outbox
/// has no pending row left. A panic in the learner's code stops the run with its message.
fn work<S: OutboxStore>(
    run: &Run,
    store: &mut S,
    worker: &'static str,
    pending: fn(&mut S) -> i64,
) {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        while !run.done.load(Ordering::SeqCst) {
            let now = run.tick(MS);
            if now > GIVE_UP_AT {
                return run.stop();
            }
            let batch = claim(store, worker, now, WORKER_LEASE, BATCH);
            if batch.is_empty() {
                if pending(store) == 0 {
                    run.emptied.store(true, Ordering::SeqCst);
                    run.stop();
                }
                run.tick(IDLE);
                continue;
            }
            let mut held = Vec::with_capacity(batch.len());
            for row in &batch {
                if row.locked_by.as_deref() != Some(worker) {
                    return run.fail(format!(
                        "claim_due(worker = {worker:?}, now = {}) returned row {} with {}, not \
                         a lease of {worker:?}",
                        at(now),
                        row.id,
                        lease(row),
                    ));
                }
                let until = row.locked_until.unwrap_or(now);
                held.push(Held {
                    id: row.id,
                    worker,
                    from: now,
                    until,
                });
            }
            for (row, lease) in batch.iter().zip(held.iter_mut()) {
                let t = run.tick(MS);
                let refused = broker_refuses(row);
                run.broker.lock().unwrap().push(Publish {
                    id: row.id,
                    worker,
                    refused,
                });
                let given_back = if refused {
                    let retry = t + 50 * MS + (row.id % 13) * 10 * MS;
                    reschedule(store, row.id, worker, t, retry, "503 Service Unavailable")
                } else {
                    mark_sent(store, row.id, worker, t)
                };
                if given_back {
                    lease.until = lease.until.min(t);
                }
            }
            run.held.lock().unwrap().extend(held);
        }
    }));
    if let Err(payload) = outcome {
        run.fail(format!(
            "worker {worker:?}: {}",
            super::support::panic_text(payload.as_ref())
        ));
    }
}

/// The run behind four checks: 1,000 due rows. Worker "crasher" claims 50 of them with a lease
/// of 5 s, publishes 10, and dies. Then four workers, each with its own connection and thread,
/// share the outbox until no row is pending; the broker refuses the first attempt of every
/// seventh row. Time is one shared simulated clock: each claim and each publish moves it 1 ms.
pub fn run_workers<D: Db>(db: &D) -> Report {
    db.seed(&many_rows(ROWS));
    let run = Run {
        clock: AtomicI64::new(T0),
        done: AtomicBool::new(false),
        emptied: AtomicBool::new(false),
        broker: Mutex::new(Vec::new()),
        held: Mutex::new(Vec::new()),
        trouble: Mutex::new(None),
    };
    let batch = claim(&mut *db.main(), CRASHER, T0, WORKER_LEASE, CRASH_BATCH);
    assert!(
        batch.len() == CRASH_BATCH,
        "worker {CRASHER:?} claimed with limit {CRASH_BATCH} from {ROWS} due rows and got {}",
        batch.len()
    );
    for row in batch.iter().take(PUBLISHED_BEFORE_CRASH) {
        run.broker.lock().unwrap().push(Publish {
            id: row.id,
            worker: CRASHER,
            refused: false,
        });
    }
    run.held
        .lock()
        .unwrap()
        .extend(batch.iter().map(|row| Held {
            id: row.id,
            worker: CRASHER,
            from: T0,
            until: T0 + WORKER_LEASE,
        }));
    let stores: Vec<D::Store> = WORKERS.iter().map(|_| db.connect()).collect();
    std::thread::scope(|scope| {
        for (worker, mut store) in WORKERS.iter().zip(stores) {
            let run = &run;
            scope.spawn(move || work(run, &mut store, worker, D::pending_with));
        }
    });
    if let Some(trouble) = run.trouble.lock().unwrap().take() {
        panic!("{trouble}");
    }
    Report {
        setting: format!(
            "4 workers on one {} outbox of 1,000 rows (batches of {BATCH}, leases of {}), after \
             worker {CRASHER:?} claimed {CRASH_BATCH} rows, published {PUBLISHED_BEFORE_CRASH} \
             and died",
            db.name(),
            span(WORKER_LEASE)
        ),
        held: run.held.into_inner().unwrap(),
        broker: run.broker.into_inner().unwrap(),
        rows: db.rows(),
        crashed: ids_of(&batch),
        ended_at: run.clock.load(Ordering::SeqCst),
        emptied: run.emptied.load(Ordering::SeqCst),
    }
}

/// The ids the broker accepted at least once.
fn accepted(report: &Report) -> BTreeSet<i64> {
    report
        .broker
        .iter()
        .filter(|p| !p.refused)
        .map(|p| p.id)
        .collect()
}

/// Every row reached the broker at least once.
pub fn every_row_published_at_least_once(report: &Report) {
    let accepted = accepted(report);
    let never: Vec<i64> = (1..=ROWS).filter(|id| !accepted.contains(id)).collect();
    assert!(
        never.is_empty(),
        "{}: when the workers stopped at {}, the broker had never accepted rows {} ({} of \
         {ROWS}); every row must be published at least once",
        report.setting,
        at(report.ended_at),
        ids(&never),
        never.len(),
    );
}

/// No row was held by two workers at the same time.
pub fn no_row_held_by_two_workers(report: &Report) {
    let mut by_row: BTreeMap<i64, Vec<&Held>> = BTreeMap::new();
    for held in &report.held {
        by_row.entry(held.id).or_default().push(held);
    }
    for leases in by_row.values() {
        for (i, first) in leases.iter().enumerate() {
            for second in &leases[i + 1..] {
                let overlap = first.from < second.until && second.from < first.until;
                assert!(
                    !overlap || first.worker == second.worker,
                    "{}: row {} was held by two workers at once: {:?} from {} until {}, and {:?} \
                     from {} until {}. A claim must skip rows whose lease is still valid, and \
                     pick and lease its rows in one atomic step, so two claims running side by \
                     side never both get a row",
                    report.setting,
                    first.id,
                    first.worker,
                    at(first.from),
                    at(first.until),
                    second.worker,
                    at(second.from),
                    at(second.until),
                );
            }
        }
    }
}

/// The crasher's rows stayed untouched while its lease was valid, and were reclaimed and
/// published after it ran out, the ten it had published a second time.
pub fn crashed_leases_are_reclaimed(report: &Report) {
    let crash_end = T0 + WORKER_LEASE;
    let early: Vec<&Held> = report
        .held
        .iter()
        .filter(|h| h.worker != CRASHER && report.crashed.contains(&h.id) && h.from < crash_end)
        .collect();
    if let Some(first) = early.first() {
        panic!(
            "{}: worker {:?} claimed row {} at {}, while the crasher's lease on it was still \
             valid (until {}); a dead worker's rows are free only when its lease runs out",
            report.setting,
            first.worker,
            first.id,
            at(first.from),
            at(crash_end),
        );
    }
    let reclaimed: BTreeSet<i64> = report
        .held
        .iter()
        .filter(|h| h.worker != CRASHER && report.crashed.contains(&h.id))
        .map(|h| h.id)
        .collect();
    let stranded: Vec<i64> = report
        .crashed
        .iter()
        .copied()
        .filter(|id| !reclaimed.contains(id))
        .collect();
    assert!(
        stranded.is_empty(),
        "{}: the crasher's lease ran out at {}, yet no worker ever reclaimed rows {} ({} of \
         {CRASH_BATCH}) before the run stopped at {}. A claim must treat locked_until <= now as \
         free",
        report.setting,
        at(crash_end),
        ids(&stranded),
        stranded.len(),
        at(report.ended_at),
    );
    let again: BTreeSet<i64> = report
        .broker
        .iter()
        .filter(|p| p.worker != CRASHER && !p.refused)
        .map(|p| p.id)
        .collect();
    let first_ten = &report.crashed[..PUBLISHED_BEFORE_CRASH];
    let missing: Vec<i64> = first_ten
        .iter()
        .copied()
        .filter(|id| !again.contains(id))
        .collect();
    assert!(
        missing.is_empty(),
        "{}: the crasher published rows {} but died before marking them, so they must be \
         published again after its lease (at least once: the table cannot know they went out); \
         rows {} were never published a second time",
        report.setting,
        ids(first_ten),
        ids(&missing),
    );
}

/// The run emptied the outbox: every row sent, none left with a lease, nothing missing.
pub fn nothing_is_lost(report: &Report) {
    let unsent: Vec<&OutboxRow> = report
        .rows
        .iter()
        .filter(|row| row.status != Status::Sent)
        .collect();
    assert!(
        report.rows.len() as i64 == ROWS && unsent.is_empty() && report.emptied,
        "{}: the workers stopped at {} with {} of {ROWS} rows in the table and {} not marked \
         sent, e.g. {}. Every row must end up 'sent'",
        report.setting,
        at(report.ended_at),
        report.rows.len(),
        unsent.len(),
        unsent.first().map_or("none".to_owned(), |row| format!(
            "row {} ('{}', attempts {}, next_retry_at {}, {})",
            row.id,
            row.status,
            row.attempts,
            at_opt(row.next_retry_at),
            lease(row)
        )),
    );
    let leased: Vec<i64> = report
        .rows
        .iter()
        .filter(|row| row.locked_by.is_some() || row.locked_until.is_some())
        .map(|row| row.id)
        .collect();
    assert!(
        leased.is_empty(),
        "{}: every row is sent, but rows {} still carry a lease: mark_sent clears locked_by \
         and locked_until, and a claim never leases a row that is not pending",
        report.setting,
        ids(&leased),
    );
    let accepted = accepted(report);
    let unpublished: Vec<i64> = report
        .rows
        .iter()
        .filter(|row| !accepted.contains(&row.id))
        .map(|row| row.id)
        .collect();
    assert!(
        unpublished.is_empty(),
        "{}: rows {} are marked sent although the broker never accepted them",
        report.setting,
        ids(&unpublished),
    );
}
