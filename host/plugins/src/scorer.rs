//! The `scorer` world: grades from analysis states, and (since WIT 1.9.0)
//! calibrated forecasts with the grades they earn. The host never computes
//! a grade or a forecast itself; it only moves states and points in and
//! answers out.

use forecast_domain::PluginKind;
use wasmtime::component::{HasSelf, InstancePre, Linker};
use wasmtime::Store;

use crate::plugin::{Identity, Plugin, World};
use crate::runtime::{CallState, Permit};
use crate::PluginError;

// The shared interfaces are the segmentation world's types, so `CallState`
// implements `host-log` once (in `segmentation.rs`). The records compare
// with `==` (tests, and callers that compare points or answers).
wasmtime::component::bindgen!({
    path: "../../wit",
    world: "scorer",
    additional_derives: [PartialEq],
    with: {
        "forecast:plugins/host-log": crate::segmentation::forecast::plugins::host_log,
    },
});

// `Forecast` is the WIT record `estimate` (which cannot be named
// `forecast` beside the function of that name).
pub use exports::forecast::plugins::forecasting::{
    Climatology, Estimate, Estimate as Forecast, GradedForecast, Point, Pooled,
};
pub use exports::forecast::plugins::scoring::{Grade, ScoreInput};
use exports::forecast::plugins::{forecasting, scoring};

/// The `scorer` world.
pub struct ScorerWorld;

/// A pre-linked scorer: `scoring` always, `forecasting` when the component
/// exports it (built against WIT 1.9.0 or later). Not the bindgen'd world
/// type, which would refuse scorers of earlier minors.
pub struct LinkedScorer {
    pre: InstancePre<CallState>,
    scoring: scoring::GuestIndices,
    forecasting: Option<forecasting::GuestIndices>,
}

/// The exports of one scorer instance.
pub struct ScorerExports {
    scoring: scoring::Guest,
    forecasting: Option<forecasting::Guest>,
}

impl ScorerExports {
    fn forecast_plugins_scoring(&self) -> &scoring::Guest {
        &self.scoring
    }

    /// The `forecasting` interface: an error naming the scorer's age when
    /// it has none (callers ask [`ScorerPlugin::has_forecasting`] first).
    fn forecasting(&self) -> wasmtime::Result<&forecasting::Guest> {
        self.forecasting.as_ref().ok_or_else(|| {
            wasmtime::format_err!(
                "the scorer exports no `forecasting` interface (WIT before 1.9.0)"
            )
        })
    }
}

impl World for ScorerWorld {
    const KIND: PluginKind = PluginKind::Scorer;
    type Bindings = ScorerExports;
    type Pre = LinkedScorer;
    type Ext = ();

    fn link(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
        Scorer::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
    }

    fn pre(pre: InstancePre<CallState>) -> wasmtime::Result<Self::Pre> {
        Ok(LinkedScorer {
            scoring: scoring::GuestIndices::new(&pre)?,
            forecasting: forecasting::GuestIndices::new(&pre).ok(),
            pre,
        })
    }

    fn instantiate(
        pre: &Self::Pre,
        store: &mut Store<CallState>,
    ) -> wasmtime::Result<ScorerExports> {
        let instance = pre.pre.instantiate(&mut *store)?;
        Ok(ScorerExports {
            scoring: pre.scoring.load(&mut *store, &instance)?,
            forecasting: match &pre.forecasting {
                Some(forecasting) => Some(forecasting.load(&mut *store, &instance)?),
                None => None,
            },
        })
    }

    /// The version is `scorer-version`'s; the name is the registry's.
    fn identify(
        store: &mut Store<CallState>,
        bindings: &ScorerExports,
    ) -> wasmtime::Result<Result<Identity, String>> {
        let version = bindings
            .forecast_plugins_scoring()
            .call_scorer_version(store)?;
        Ok(Ok(Identity {
            name: None,
            version,
            description: String::new(),
        }))
    }
}

/// A loaded, pre-linked scorer version.
pub type ScorerPlugin = Plugin<ScorerWorld>;

impl Plugin<ScorerWorld> {
    /// Grades `inputs` in a fresh, bounded instance (blocking). A scorer
    /// that answers a different number of grades, or a score outside
    /// [0, 100], breaks its contract and is reported as failed.
    pub fn score(&self, permit: &Permit, inputs: &[ScoreInput]) -> Result<Vec<Grade>, PluginError> {
        let _call = guest_span!("score", self.label()).entered();
        let grades = self.call(permit, |store, b| {
            b.forecast_plugins_scoring().call_score(store, inputs)
        })?;
        if grades.len() != inputs.len() {
            return Err(self.broken(format!(
                "answered {} grades for {} inputs",
                grades.len(),
                inputs.len()
            )));
        }
        if let Some(g) = grades.iter().find(|g| !(0.0..=100.0).contains(&g.score)) {
            return Err(self.broken(format!("score {} is outside 0..=100", g.score)));
        }
        Ok(grades)
    }

    /// Whether the scorer exports `forecasting` (WIT 1.9.0 or later).
    pub fn has_forecasting(&self) -> bool {
        self.pre().forecasting.is_some()
    }

    /// `forecasting.forecast` in a fresh, bounded instance (blocking): the
    /// forecast and grade of each of `points`, one asset's history at
    /// horizon `return_period` (calendar days), oldest first. A scorer
    /// that answers a different number of points, a score outside
    /// [0, 100], or a forecast with a figure that is not finite (or a
    /// negative standard error) breaks its contract and is reported as
    /// failed; so is one without `forecasting` (see
    /// [`ScorerPlugin::has_forecasting`]).
    pub fn forecast(
        &self,
        permit: &Permit,
        return_period: u32,
        points: &[Point],
    ) -> Result<Vec<GradedForecast>, PluginError> {
        let _call = guest_span!("forecast", self.label()).entered();
        let answers = self.call(permit, |store, b| {
            b.forecasting()?.call_forecast(store, return_period, points)
        })?;
        if answers.len() != points.len() {
            return Err(self.broken(format!(
                "answered {} forecasts for {} points",
                answers.len(),
                points.len()
            )));
        }
        for (i, g) in answers.iter().enumerate() {
            if !(0.0..=100.0).contains(&g.score) {
                return Err(self.broken(format!("point {i}: score {} is outside 0..=100", g.score)));
            }
            if let Some(f) = &g.forecast {
                let figures = [f.central, f.p10, f.p90, f.central_se, f.reference];
                if !figures.iter().all(|v| v.is_finite()) || f.central_se < 0.0 {
                    return Err(self.broken(format!(
                        "point {i}: a forecast figure is not a finite number (or a negative standard error): {figures:?}"
                    )));
                }
            }
        }
        Ok(answers)
    }
}
