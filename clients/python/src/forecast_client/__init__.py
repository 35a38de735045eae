"""A Python client of the Forecast Engine API that speaks pandas.

    from forecast_client import Client
    client = Client("http://127.0.0.1:8080", api_key="svc_...")
    client.verdict("AAPL").grade.letter
    client.analysis("^GSPC").time_series.to_frame()     # DataFrame indexed by date

`forecast_client.models` holds the request and answer models generated from
the server's OpenAPI document; `forecast_client.frames` extends the answers
with `to_frame()`.
"""

from . import models
from .client import Client, __version__
from .errors import ForecastAPIError, RateLimit, RateLimitError
from .frames import Analysis, Backtest, EquityCurve, Ranking, TimeSeries, TrackRecord, UniverseTrackRecord, Verdict

__all__ = [
    "Analysis",
    "Backtest",
    "Client",
    "EquityCurve",
    "ForecastAPIError",
    "RateLimit",
    "RateLimitError",
    "Ranking",
    "TimeSeries",
    "TrackRecord",
    "UniverseTrackRecord",
    "Verdict",
    "__version__",
    "models",
]
