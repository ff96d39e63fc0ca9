//! The agenda in miniature (book §10.4): clients that only read, on the given model.
//!
//! `cargo run -p ch10_contention_lab --example pings` runs it on a fixed network, where the
//! answer can be checked by hand, and on the lab's noisy one. It uses the given modules only,
//! none of your code: it is a smaller problem of the same shape as `simulate`.

use std::time::Duration;

use ch10_contention_lab::lab::LabRng;
use ch10_contention_lab::{EventQueue, Network, Request, Row};
use rand::{Rng, SeedableRng};

// ANCHOR: pings
/// `clients` clients each read the row `reads` times in a row: a client sends its next read
/// the moment the answer to the previous one reaches it. Returns how many reads the row served
/// and when the last answer arrived.
fn pings(clients: usize, reads: u32, network: Network, rng: &mut impl Rng) -> (u64, Duration) {
    let row = Row::new();
    let mut agenda = EventQueue::new();
    let mut reads_left = vec![reads; clients];
    let (mut served, mut last_answer) = (0, Duration::ZERO);
    if reads == 0 {
        return (served, last_answer);
    }
    for reader in 0..clients {
        agenda.send(network.delay(rng), reader, Request::Read);
    }
    // Until no request is left in flight: the earliest arrival first.
    while !agenda.is_empty() {
        let event = agenda.pop().expect("the agenda is not empty");
        // The row answers the moment a request arrives; the answer travels one hop back.
        served += 1;
        let _version = row.read();
        let reply_at = event.at + network.delay(rng);
        last_answer = last_answer.max(reply_at);
        reads_left[event.client] -= 1;
        if reads_left[event.client] > 0 {
            // The next read leaves when the answer is in, and needs a hop of its own.
            agenda.send(reply_at + network.delay(rng), event.client, Request::Read);
        }
    }
    (served, last_answer)
}
// ANCHOR_END: pings

fn main() {
    // Every hop 10 ms: a read is answered 20 ms after it is sent, so three reads in a row end at
    // 60 ms, whatever the number of clients (the row serves them all at once).
    let fixed = Network::fixed(Duration::from_millis(10));
    let (served, last) = pings(3, 3, fixed, &mut LabRng::seed_from_u64(0));
    println!("3 clients x 3 reads, every hop 10 ms: {served} reads, last answer at {last:?}");
    assert_eq!((served, last), (9, Duration::from_millis(60)));

    for clients in [10, 100] {
        let (served, last) = pings(clients, 5, Network::LAB, &mut LabRng::seed_from_u64(1));
        println!(
            "{clients} clients x 5 reads, hops |Normal(10 ms, 2 ms)|: {served} reads, last answer at {:.1} ms",
            last.as_secs_f64() * 1e3
        );
        assert_eq!(served, clients as u64 * 5);
    }
}
