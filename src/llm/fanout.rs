//! Samples fetched one request each, side by side. Where a provider cannot return `n`
//! samples at once (Anthropic has no `n`; some OpenAI-compatible servers ignore it),
//! the samples go out concurrently, each under a slot of the run's one concurrency
//! limit, and come back in sample order.
//!
//! The call itself already holds a slot, and always works through the samples with
//! it; other workers join as more slots free up. So a call never waits for a slot it
//! cannot get (calls that each hold one slot and wait for a second would deadlock).

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use super::limit::{Limit, Permit, Priority};
use crate::protocol::CallError;
use futures::stream::{FuturesUnordered, StreamExt};

/// More slots of the run's concurrency limit, for the samples of a call beyond its first.
#[derive(Clone, Default)]
pub struct Slots {
    limit: Option<Limit>,
    /// The call's own priority, which its further slots wait with.
    priority: Priority,
    /// Set when the run must send nothing more: no further slots are handed out.
    halted: Option<Arc<AtomicBool>>,
}

impl Slots {
    /// No more slots: samples are fetched one after another under the call's own.
    pub fn none() -> Self {
        Slots::default()
    }

    /// Slots of `limit`, until `halted` is set.
    pub fn of(limit: impl Into<Limit>, halted: Arc<AtomicBool>) -> Self {
        Slots { limit: Some(limit.into()), priority: Priority::default(), halted: Some(halted) }
    }

    /// The same slots, waited for with the call's `priority` (see [`Limit`]).
    pub fn at(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    /// A slot, when one frees up; `None` if there are none to have.
    async fn acquire(&self) -> Option<Permit> {
        let permit = self.limit.as_ref()?.acquire(self.priority).await?;
        let halted = self.halted.as_ref().is_some_and(|h| h.load(Ordering::SeqCst));
        (!halted).then_some(permit)
    }
}

/// What a fetch that failed had received: the items that came, in order, and the first
/// failure (which ended the fetch).
#[derive(Debug)]
pub struct Partial<T> {
    pub got: Vec<T>,
    pub error: CallError,
}

/// Fetch items `0..count` with `fetch`, side by side as far as `slots` allow, and
/// return them in order. The first error ends the fetch (requests still going are
/// dropped) and is returned with the items that had come.
pub async fn fan_out<T, F, Fut>(count: u32, slots: &Slots, fetch: F) -> Result<Vec<T>, Partial<T>>
where
    T: Send,
    F: Fn(u32) -> Fut + Sync,
    Fut: Future<Output = Result<T, CallError>> + Send,
{
    if count == 0 {
        return Ok(Vec::new());
    }
    let next = AtomicU32::new(0);
    let got: Mutex<Vec<Option<T>>> = Mutex::new((0..count).map(|_| None).collect());
    let (next, got, fetch) = (&next, &got, &fetch);
    // Worker 0 runs on the call's own slot; the others wait for one of their own first.
    let worker = |own: bool| async move {
        let _slot = if own {
            None
        } else {
            match slots.acquire().await {
                Some(slot) => Some(slot),
                None => return Ok(()),
            }
        };
        loop {
            let i = next.fetch_add(1, Ordering::SeqCst);
            if i >= count {
                return Ok(());
            }
            let item = fetch(i).await?;
            got.lock().unwrap_or_else(|e| e.into_inner())[i as usize] = Some(item);
        }
    };
    let mut workers: FuturesUnordered<_> = (0..count).map(|w| worker(w == 0)).collect();
    let all_in = || got.lock().unwrap_or_else(|e| e.into_inner()).iter().all(Option::is_some);
    let mut failed = None;
    while let Some(done) = workers.next().await {
        if let Err(error) = done {
            failed = Some(error);
            break;
        }
        // Workers still waiting for a slot have nothing left to do.
        if all_in() {
            break;
        }
    }
    drop(workers);
    let items = std::mem::take(&mut *got.lock().unwrap_or_else(|e| e.into_inner()));
    let got = items.into_iter().flatten().collect();
    match failed {
        Some(error) => Err(Partial { got, error }),
        None => Ok(got),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::sync::Semaphore;

    #[tokio::test(start_paused = true)]
    async fn samples_go_side_by_side_under_the_limit_and_come_back_in_order() {
        // Four slots, one held by the call: three more workers join it.
        let limit = Arc::new(Semaphore::new(4));
        let own = Arc::clone(&limit).acquire_owned().await.unwrap();
        let slots = Slots::of(Arc::clone(&limit), Arc::new(AtomicBool::new(false)));
        let in_flight = AtomicU32::new(0);
        let most = AtomicU32::new(0);
        let started = tokio::time::Instant::now();
        let items = fan_out(8, &slots, |i| {
            let (in_flight, most) = (&in_flight, &most);
            async move {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                // Later samples finish first: order must not follow arrival.
                tokio::time::sleep(Duration::from_millis(100 - i as u64 * 10)).await;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, CallError>(i * 10)
            }
        })
        .await
        .unwrap();
        assert_eq!(items, (0..8).map(|i| i * 10).collect::<Vec<_>>());
        assert_eq!(most.load(Ordering::SeqCst), 4, "the call's slot and the three free ones");
        assert!(
            started.elapsed() < Duration::from_millis(300),
            "8 samples of ≤100 ms on 4 slots: {:?}",
            started.elapsed()
        );
        assert_eq!(limit.available_permits(), 3, "the extra slots are given back");
        drop(own);
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_with_no_free_slot_fetches_its_samples_itself() {
        // Every slot is taken (by this call and others waiting for more): no deadlock.
        let limit = Arc::new(Semaphore::new(1));
        let _own = Arc::clone(&limit).acquire_owned().await.unwrap();
        let slots = Slots::of(Arc::clone(&limit), Arc::new(AtomicBool::new(false)));
        let items = fan_out(3, &slots, |i| async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Ok::<_, CallError>(i)
        })
        .await
        .unwrap();
        assert_eq!(items, vec![0, 1, 2]);
        let none = fan_out(2, &Slots::none(), |i| async move { Ok::<_, CallError>(i) }).await.unwrap();
        assert_eq!(none, vec![0, 1]);
    }

    #[tokio::test]
    async fn the_first_failure_is_the_calls_with_what_had_come() {
        // One slot: the samples come one after another, so 0 and 1 are in when 2 fails.
        let slots = Slots::none();
        let failed = fan_out(4, &slots, |i| async move {
            if i == 2 {
                Err(CallError { kind: crate::protocol::CallErrorKind::Server, message: "boom".into() })
            } else {
                Ok(i)
            }
        })
        .await
        .unwrap_err();
        assert_eq!(failed.error.message, "boom");
        assert_eq!(failed.got, vec![0, 1], "the samples received before the failure are kept");
    }
}
