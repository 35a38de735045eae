//! Web sessions (DESIGN §7): signing in, the user of a session token,
//! signing out, and the upkeep of expired rows.
//!
//! Signing in is built for the open internet (issue 14):
//! - the request is validated (e-mail ≤ 254 characters and well-formed,
//!   password ≤ 1,024 bytes) before any limiter or hash sees it;
//! - only failures count, under fixed-size names (a digest of the
//!   normalised e-mail), per account *and client address* and per client
//!   address, and a success resets the account's count from that address —
//!   so a stranger guessing someone's password slows themselves down
//!   without locking the owner out;
//! - at most [`SessionService::hash_slots`] password hashes run at once
//!   (argon2id takes 19 MiB each); the excess is answered 503 with
//!   Retry-After at once, never queued;
//! - a wrong e-mail and a wrong password cost the same and answer the same.
//!
//! Tokens are random; the store keeps their SHA-256 only. Sessions expire
//! after [`SESSION_IDLE_SECONDS`] unused and [`SESSION_SECONDS`] in all.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use forecast_api::accounts::LoginRequest;
use forecast_domain::{SharedClock, User};
use forecast_store::{AccountStore, QuotaStore, StoreError, WindowUsage};
use tokio::sync::Semaphore;

use crate::auth::{
    self, LOGIN_ADDRESS_ATTEMPTS, LOGIN_ATTEMPTS, SESSION_IDLE_SECONDS, SESSION_SECONDS,
    SESSION_SLIDE_STEP,
};
use crate::error::Error;
use crate::freshness::Freshness;

/// A session just opened: its user and the token for the cookie (shown
/// once; only its hash is stored).
#[derive(Debug)]
pub struct Opened {
    /// The signed-in user.
    pub user: User,
    /// The session token.
    pub token: String,
}

/// What the store's upkeep removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Purged {
    /// Expired sessions.
    pub sessions: u64,
    /// Counters past their retention.
    pub counters: u64,
}

/// Sessions over the store.
#[derive(Clone)]
pub struct SessionService {
    accounts: Arc<dyn AccountStore>,
    /// Counts failed sign-ins.
    quotas: Arc<dyn QuotaStore>,
    /// Permits for concurrent password hashes.
    hashing: Arc<Semaphore>,
    slots: usize,
    /// The generation counters; a session found in the store is
    /// remembered while the `auth` counter (bumped by a sign-out, a
    /// deleted session, a changed or deleted user) has not moved.
    freshness: Freshness,
    remembered: Arc<Mutex<HashMap<String, Remembered>>>,
    /// Sessions' expiries and the sign-in limiter's windows.
    clock: SharedClock,
}

/// A session found in the store: its user, the `auth` generation it was
/// read under, and when its expiry was last slid (or found not to need
/// it).
struct Remembered {
    user: User,
    generation: i64,
    slid_at: i64,
}

/// Sessions remembered at most; past it, the map starts over.
const REMEMBERED_SESSIONS: usize = 16_384;

/// The limiter's name for an account seen from an address: a digest of the
/// normalised e-mail (fixed size, whatever was sent) and the address.
fn account_subject(email: &str, client: IpAddr) -> String {
    format!("login:{}@{client}", &auth::sha256_hex(email)[..32])
}

fn address_subject(client: IpAddr) -> String {
    format!("login-addr:{client}")
}

fn exhausted(w: &WindowUsage) -> bool {
    w.used >= w.limit
}

impl SessionService {
    /// A service over the store's users and sessions, counting failed
    /// sign-ins in its counters, running at most `hash_slots` password
    /// hashes at once, reading the time from `clock`.
    pub fn new(
        accounts: Arc<dyn AccountStore>,
        quotas: Arc<dyn QuotaStore>,
        hash_slots: usize,
        freshness: Freshness,
        clock: SharedClock,
    ) -> Self {
        let slots = hash_slots.max(1);
        SessionService {
            accounts,
            quotas,
            hashing: Arc::new(Semaphore::new(slots)),
            slots,
            freshness,
            remembered: Arc::default(),
            clock,
        }
    }

    /// How many password hashes may run at once.
    pub fn hash_slots(&self) -> usize {
        self.slots
    }

    /// Signs in from `client` with `request`.
    pub async fn login(&self, request: LoginRequest, client: IpAddr) -> Result<Opened, Error> {
        let email = request.validate()?;
        let password = request.password;
        let now = self.clock.timestamp();
        let account = account_subject(&email, client);
        let address = address_subject(client);
        let limiter = |e: StoreError| {
            tracing::error!(error = %e, "login limiter unavailable");
            Error::Unavailable("sign-in is temporarily unavailable".into())
        };
        // Look (cost 0) before spending a hash: blocked when either count
        // of failures is used up.
        for (subject, window) in [
            (&account, LOGIN_ATTEMPTS),
            (&address, LOGIN_ADDRESS_ATTEMPTS),
        ] {
            let seen = self
                .quotas
                .consume(subject, &[window], 0, now)
                .await
                .map_err(limiter)?;
            if let Some(w) = seen.windows.first().filter(|w| exhausted(w)) {
                crate::rejected("login_limit");
                return Err(Error::TooManyAttempts {
                    detail: "too many failed sign-in attempts from this address; try again later"
                        .into(),
                    retry_after: (w.reset - now).max(1) as u64,
                });
            }
        }
        let Ok(permit) = self.hashing.clone().try_acquire_owned() else {
            return Err(Error::Busy {
                detail: "the server is busy signing other people in; try again in a second".into(),
                retry_after: 1,
            });
        };
        let (user, hash) = match self.accounts.user_by_email(&email).await? {
            Some((user, hash)) => (Some(user), hash),
            // Unknown e-mail: verify against a decoy so both failures cost the same.
            None => (None, auth::decoy_hash().to_string()),
        };
        let verified = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            auth::verify_password(&password, &hash)
        })
        .await
        .map_err(|e| Error::Internal(format!("password check failed: {e}")))?;
        let Some(user) = user.filter(|_| verified) else {
            for (subject, window) in [
                (&account, LOGIN_ATTEMPTS),
                (&address, LOGIN_ADDRESS_ATTEMPTS),
            ] {
                self.quotas
                    .consume(subject, &[window], 1, now)
                    .await
                    .map_err(limiter)?;
            }
            return Err(Error::InvalidCredentials(
                "invalid email or password".into(),
            ));
        };
        self.quotas.reset(&account).await.map_err(limiter)?;
        let (token, token_hash) = auth::new_session_token();
        self.accounts
            .create_session(&token_hash, &user.id, now, now + SESSION_IDLE_SECONDS)
            .await?;
        Ok(Opened { user, token })
    }

    /// The user of a session this replica remembers (within a slide step
    /// of when it was last read from the store) and the `auth` generation
    /// it was read under: the caller confirms that generation with
    /// counters read after its request arrived, as for a remembered key.
    pub fn remembered(&self, token: &str, now: i64) -> Option<(User, i64)> {
        let hash = auth::sha256_hex(token);
        let remembered = self.remembered.lock().expect("sessions poisoned");
        let r = remembered.get(&hash)?;
        (now - r.slid_at < SESSION_SLIDE_STEP).then(|| (r.user.clone(), r.generation))
    }

    /// The user of an unexpired session token; a use slides the session's
    /// idle expiry (one write per [`SESSION_SLIDE_STEP`] at most). A
    /// session read from the store is remembered for up to one slide step
    /// while the `auth` generation (read after this call began) has not
    /// moved, so a sign-out or a deleted user is seen at once; a session
    /// may outlive its 7-day cap by at most that step.
    pub async fn user(&self, token: &str) -> Result<Option<User>, Error> {
        let hash = auth::sha256_hex(token);
        let generation = self.freshness.current().await.map(|g| g.auth);
        let now = self.clock.timestamp();
        if let Some(g) = generation {
            let remembered = self.remembered.lock().expect("sessions poisoned");
            if let Some(r) = remembered.get(&hash) {
                if r.generation == g && now - r.slid_at < SESSION_SLIDE_STEP {
                    return Ok(Some(r.user.clone()));
                }
            }
        }
        let user = self.accounts.session_user(&hash, now).await?;
        if let Some(user) = &user {
            self.accounts
                .slide_session(
                    &hash,
                    now,
                    SESSION_IDLE_SECONDS,
                    SESSION_SECONDS,
                    SESSION_SLIDE_STEP,
                )
                .await?;
            if let Some(g) = generation {
                let mut remembered = self.remembered.lock().expect("sessions poisoned");
                if remembered.len() >= REMEMBERED_SESSIONS {
                    remembered.clear();
                }
                remembered.insert(
                    hash,
                    Remembered {
                        user: user.clone(),
                        generation: g,
                        slid_at: now,
                    },
                );
            }
        }
        Ok(user)
    }

    /// Ends the session of `token` (nothing if it is unknown).
    pub async fn logout(&self, token: &str) -> Result<(), Error> {
        let hash = auth::sha256_hex(token);
        self.remembered
            .lock()
            .expect("sessions poisoned")
            .remove(&hash);
        Ok(self.accounts.delete_session(&hash).await?)
    }

    /// Deletes expired sessions and limiter counters past their retention
    /// (run periodically by the server).
    pub async fn purge(&self) -> Result<Purged, StoreError> {
        let now = self.clock.timestamp();
        Ok(Purged {
            sessions: self.accounts.purge_sessions(now).await?,
            counters: self.quotas.purge_counters(now).await?,
        })
    }
}
