//! The language-model capability lent to the matcher (WIT `llm`): one
//! OpenAI-compatible chat completion per call, bounded by a timeout. Any
//! failure answers `None`, so the matcher's own answer stands.

use std::time::Duration;

/// Where the model is (`FORECAST_LLM_URL`, `_MODEL`, `_API_KEY`,
/// `_TIMEOUT_MS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmConfig {
    /// Base URL of an OpenAI-compatible API, e.g. `https://api.openai.com/v1`;
    /// `/chat/completions` is appended.
    pub url: String,
    /// Model name.
    pub model: String,
    /// Bearer key, if the endpoint needs one.
    pub api_key: Option<String>,
    /// Budget of one completion.
    pub timeout: Duration,
}

/// A configured model.
pub struct LlmClient {
    config: LlmConfig,
    http: reqwest::blocking::Client,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("LlmClient")
            .field("url", &self.config.url)
            .field("model", &self.config.model)
            .finish()
    }
}

impl LlmClient {
    /// A client for `config` (no request is made yet).
    pub fn new(config: LlmConfig) -> anyhow::Result<Self> {
        let http = reqwest::blocking::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            .build()?;
        Ok(LlmClient { config, http })
    }

    /// The model's reply to `prompt`, or `None` on any failure (logged).
    /// Blocking: the matcher calls it from inside a plugin call, which runs
    /// on a blocking thread.
    pub fn complete(&self, prompt: &str) -> Option<String> {
        let url = format!("{}/chat/completions", self.config.url.trim_end_matches('/'));
        let body = serde_json::json!({
            "model": self.config.model,
            "temperature": 0,
            "max_tokens": 50,
            "messages": [{ "role": "user", "content": prompt }],
        });
        let mut request = self.http.post(&url).json(&body);
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key);
        }
        let started = std::time::Instant::now();
        let reply = request
            .send()
            .and_then(|r| r.error_for_status())
            .and_then(|r| r.json::<serde_json::Value>());
        match reply {
            Ok(v) => {
                let text = v["choices"][0]["message"]["content"]
                    .as_str()
                    .map(str::to_string);
                if text.is_none() {
                    tracing::warn!(
                        url,
                        "language model reply without choices[0].message.content"
                    );
                }
                tracing::debug!(
                    ms = started.elapsed().as_millis() as u64,
                    "language model answered"
                );
                text
            }
            Err(e) => {
                tracing::warn!(url, error = %e, "language model unavailable; the lexical answer stands");
                None
            }
        }
    }
}
