//! Given: the types the chapter's functions take and return.

/// A point in time: milliseconds since the Unix epoch.
///
/// The functions of this chapter never read a clock; the caller passes `now` in, so a test can
/// place every event exactly where it wants on the timeline.
pub type Millis = i64;

/// The event type of the one event this chapter publishes.
pub const ORDER_PLACED: &str = "OrderPlaced";

/// An order as the customer submitted it, before it has an id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOrder {
    pub customer: String,
    pub amount_cents: i64,
}

impl NewOrder {
    /// An order of `amount_cents` for `customer`.
    pub fn new(customer: impl Into<String>, amount_cents: i64) -> Self {
        Self {
            customer: customer.into(),
            amount_cents,
        }
    }
}

/// The id of a row of the `orders` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OrderId(pub i64);

/// The JSON body of the `OrderPlaced` event for the order `id`:
/// `{"order_id":7,"customer":"ada","amount_cents":1250}`.
pub fn order_placed_payload(id: OrderId, order: &NewOrder) -> String {
    serde_json::json!({
        "order_id": id.0,
        "customer": order.customer,
        "amount_cents": order.amount_cents,
    })
    .to_string()
}

/// One row of the outbox, as the relay hands it to the broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEvent {
    /// The outbox row's id: unique per event, so a consumer can recognise a duplicate.
    pub id: i64,
    /// The order the event is about.
    pub aggregate_id: i64,
    pub event_type: String,
    pub payload: String,
    pub created_at: Millis,
}

/// What one pass of the relay did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Pending rows read from the outbox (at most `limit`).
    pub fetched: usize,
    /// Rows the broker acknowledged and the relay marked `sent`.
    pub published: usize,
    /// Rows the broker refused; they stay `pending` for the next pass.
    pub failed: usize,
}
