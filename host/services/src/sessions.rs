//! Web sessions (DESIGN §7): signing in (an attempt limit per e-mail, the
//! same cost and the same answer for a wrong e-mail and a wrong password),
//! the user of a session token, signing out. Tokens are random; the store
//! keeps their SHA-256 only.

use std::sync::Arc;

use forecast_domain::User;
use forecast_store::{AccountStore, QuotaStore, StoreError};

use crate::auth::{self, LOGIN_ATTEMPTS, SESSION_SECONDS};
use crate::error::Error;

/// A session just opened: its user and the token for the cookie (shown
/// once; only its hash is stored).
#[derive(Debug)]
pub struct Opened {
    /// The signed-in user.
    pub user: User,
    /// The session token.
    pub token: String,
}

/// Sessions over the store.
#[derive(Clone)]
pub struct SessionService {
    accounts: Arc<dyn AccountStore>,
    /// Counts sign-in attempts.
    quotas: Arc<dyn QuotaStore>,
}

impl SessionService {
    /// A service over the store's users and sessions, counting attempts
    /// in its quota windows.
    pub fn new(accounts: Arc<dyn AccountStore>, quotas: Arc<dyn QuotaStore>) -> Self {
        SessionService { accounts, quotas }
    }

    /// Signs `email` in with `password`.
    pub async fn login(&self, email: &str, password: String) -> Result<Opened, Error> {
        let email = email.trim().to_lowercase();
        let now = chrono::Utc::now().timestamp();
        let attempts = self
            .quotas
            .consume(&format!("login:{email}"), &[LOGIN_ATTEMPTS], 1, now)
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "login limiter unavailable");
                Error::Unavailable("sign-in is temporarily unavailable".into())
            })?;
        if !attempts.admitted {
            return Err(Error::TooManyAttempts {
                detail: "too many sign-in attempts; try again later".into(),
                retry_after: (attempts.windows[0].reset - now).max(1) as u64,
            });
        }
        let (user, hash) = match self.accounts.user_by_email(&email).await? {
            Some((user, hash)) => (Some(user), hash),
            // Unknown e-mail: verify against a decoy so both failures cost the same.
            None => (None, auth::decoy_hash().to_string()),
        };
        let verified = tokio::task::spawn_blocking(move || auth::verify_password(&password, &hash))
            .await
            .map_err(|e| Error::Internal(format!("password check failed: {e}")))?;
        let Some(user) = user.filter(|_| verified) else {
            return Err(Error::InvalidCredentials(
                "invalid email or password".into(),
            ));
        };
        let (token, token_hash) = auth::new_session_token();
        self.accounts
            .create_session(&token_hash, &user.id, now, now + SESSION_SECONDS)
            .await?;
        Ok(Opened { user, token })
    }

    /// The user of an unexpired session token.
    pub async fn user(&self, token: &str) -> Result<Option<User>, StoreError> {
        self.accounts
            .session_user(&auth::sha256_hex(token), chrono::Utc::now().timestamp())
            .await
    }

    /// Ends the session of `token` (nothing if it is unknown).
    pub async fn logout(&self, token: &str) -> Result<(), StoreError> {
        self.accounts.delete_session(&auth::sha256_hex(token)).await
    }
}
