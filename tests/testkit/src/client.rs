//! The HTTP client of both harnesses: the small part of the `reqwest` API
//! the tests use (`client().post(url).bearer_auth(..).json(..).send()`,
//! `status()`, `headers()`, `json()`, `text()`), sent either over a socket
//! to the real binary (`reqwest`) or straight into the router in this
//! process (`tower::ServiceExt::oneshot`). One type for both, so a test and
//! its helpers move between the harnesses by changing only how the server
//! is started.

use axum::body::{Body, Bytes};
use axum::http::{self, header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tower::ServiceExt;

/// Where requests go.
#[derive(Clone)]
pub enum Client {
    /// Over HTTP to a `forecast serve` process.
    Remote(reqwest::Client),
    /// Into the router, run on the app's own runtime `rt`; `base` is the
    /// app's own origin, which every URL starts with.
    Local {
        router: axum::Router,
        base: String,
        rt: tokio::runtime::Handle,
    },
}

impl Client {
    pub fn get(&self, url: impl AsRef<str>) -> RequestBuilder {
        self.request(Method::GET, url)
    }

    pub fn post(&self, url: impl AsRef<str>) -> RequestBuilder {
        self.request(Method::POST, url)
    }

    pub fn delete(&self, url: impl AsRef<str>) -> RequestBuilder {
        self.request(Method::DELETE, url)
    }

    /// `url` is the server's base followed by the path and query, as
    /// `Server::url` makes it.
    pub fn request(&self, method: Method, url: impl AsRef<str>) -> RequestBuilder {
        let url = url.as_ref();
        match self {
            Client::Remote(client) => RequestBuilder::Remote(client.request(method, url)),
            Client::Local { router, base, rt } => {
                let path = url
                    .strip_prefix(base.as_str())
                    .unwrap_or_else(|| panic!("{url} is not on the in-process app ({base})"));
                RequestBuilder::Local {
                    router: router.clone(),
                    rt: rt.clone(),
                    // What hyper hands a handler: the origin-form target
                    // and a Host header.
                    request: http::Request::builder()
                        .method(method)
                        .uri(path)
                        .header(header::HOST, base.trim_start_matches("http://")),
                    body: Vec::new(),
                }
            }
        }
    }
}

/// One request being built.
pub enum RequestBuilder {
    Remote(reqwest::RequestBuilder),
    Local {
        router: axum::Router,
        rt: tokio::runtime::Handle,
        request: http::request::Builder,
        body: Vec<u8>,
    },
}

impl RequestBuilder {
    pub fn header<K, V>(self, name: K, value: V) -> RequestBuilder
    where
        HeaderName: TryFrom<K>,
        <HeaderName as TryFrom<K>>::Error: Into<http::Error>,
        HeaderValue: TryFrom<V>,
        <HeaderValue as TryFrom<V>>::Error: Into<http::Error>,
    {
        match self {
            RequestBuilder::Remote(r) => RequestBuilder::Remote(r.header(name, value)),
            RequestBuilder::Local {
                router,
                rt,
                request,
                body,
            } => RequestBuilder::Local {
                router,
                rt,
                request: request.header(name, value),
                body,
            },
        }
    }

    pub fn bearer_auth(self, token: impl std::fmt::Display) -> RequestBuilder {
        match self {
            RequestBuilder::Remote(r) => RequestBuilder::Remote(r.bearer_auth(token)),
            local => local.header(header::AUTHORIZATION, format!("Bearer {token}")),
        }
    }

    /// A JSON body, with its content type unless one was set (as `reqwest`).
    pub fn json<T: Serialize + ?Sized>(self, value: &T) -> RequestBuilder {
        match self {
            RequestBuilder::Remote(r) => RequestBuilder::Remote(r.json(value)),
            RequestBuilder::Local {
                router,
                rt,
                mut request,
                ..
            } => {
                let typed = request
                    .headers_ref()
                    .is_some_and(|h| h.contains_key(header::CONTENT_TYPE));
                if !typed {
                    request = request.header(header::CONTENT_TYPE, "application/json");
                }
                RequestBuilder::Local {
                    router,
                    rt,
                    request,
                    body: serde_json::to_vec(value).expect("serialize the body"),
                }
            }
        }
    }

    pub fn body(self, body: impl Into<Vec<u8>>) -> RequestBuilder {
        match self {
            RequestBuilder::Remote(r) => RequestBuilder::Remote(r.body(body.into())),
            RequestBuilder::Local {
                router,
                rt,
                request,
                ..
            } => RequestBuilder::Local {
                router,
                rt,
                request,
                body: body.into(),
            },
        }
    }

    /// Sends the request and reads the whole response. Only a remote
    /// request can fail (the router's error type is `Infallible`).
    pub async fn send(self) -> Result<Response, reqwest::Error> {
        match self {
            RequestBuilder::Remote(r) => {
                let r = r.send().await?;
                let status = r.status();
                let headers = r.headers().clone();
                let body = r.bytes().await?;
                Ok(Response {
                    status,
                    headers,
                    body,
                })
            }
            RequestBuilder::Local {
                router,
                rt,
                mut request,
                body,
            } => {
                if !body.is_empty() {
                    // As a client sends it; the body limit reads it first.
                    request = request.header(header::CONTENT_LENGTH, body.len());
                }
                let request = request.body(Body::from(body)).expect("a valid request");
                // The handler runs on the app's runtime, as on a server's:
                // a test blocking its own thread (running the CLI) then
                // never freezes a handler half-way through a transaction.
                let handled = rt.spawn(async move {
                    let response = match router.oneshot(request).await {
                        Ok(response) => response,
                        Err(never) => match never {},
                    };
                    let (parts, body) = response.into_parts();
                    let body = axum::body::to_bytes(body, usize::MAX)
                        .await
                        .expect("read the response body");
                    Response {
                        status: parts.status,
                        headers: parts.headers,
                        body,
                    }
                });
                Ok(handled.await.expect("the handler task"))
            }
        }
    }
}

/// A complete response.
pub struct Response {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Response {
    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    pub async fn json<T: DeserializeOwned>(self) -> serde_json::Result<T> {
        serde_json::from_slice(&self.body)
    }

    /// The body as received (still encoded if the server compressed it).
    pub fn bytes(&self) -> &Bytes {
        &self.body
    }

    pub async fn text(self) -> Result<String, std::string::FromUtf8Error> {
        String::from_utf8(self.body.to_vec())
    }
}
