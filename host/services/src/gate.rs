//! One computation per key at a time: the first request for a missing
//! answer computes it, the others wait at the gate and then find it in
//! memory, instead of each computing it (a cold track record under 32
//! connections was computed 32 times, and the heavy-work budget refused
//! most of them).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;

/// Gates by key.
pub struct Gates<K> {
    held: Mutex<HashMap<K, Arc<tokio::sync::Mutex<()>>>>,
}

/// Gates kept before the idle ones are let go.
const GATES: usize = 1_024;

impl<K: Hash + Eq + Clone> Default for Gates<K> {
    fn default() -> Self {
        Gates {
            held: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Hash + Eq + Clone> Gates<K> {
    /// Waits until no other holder of `key`'s gate is inside; held until
    /// the guard drops.
    pub async fn enter(&self, key: &K) -> OwnedMutexGuard<()> {
        let gate = {
            let mut held = self.held.lock().expect("gates poisoned");
            if held.len() >= GATES {
                held.retain(|_, g| Arc::strong_count(g) > 1);
            }
            held.entry(key.clone()).or_default().clone()
        };
        gate.lock_owned().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Eight callers of one key: each enters alone, one after another.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn one_caller_of_a_key_is_inside_at_a_time() {
        let gates = Arc::new(Gates::<u32>::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (gates, inside, most) = (gates.clone(), inside.clone(), most.clone());
            tasks.push(tokio::spawn(async move {
                let _in = gates.enter(&7).await;
                let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                inside.fetch_sub(1, Ordering::SeqCst);
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
        // Another key is not held up by this one.
        let _a = gates.enter(&7).await;
        let _b = tokio::time::timeout(std::time::Duration::from_secs(1), gates.enter(&8))
            .await
            .expect("key 8 enters while 7 is held");
    }
}
