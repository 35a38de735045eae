import { render } from "preact";
import "uplot/dist/uPlot.min.css";
import "./styles.css";
import { App } from "./app";
import { interceptLinks } from "./router";
import { prefetch, WEB } from "./api/client";
import { rankingParams, rankingQuery } from "./pages/ranking";
import { wasPremium } from "./session";

interceptLinks();
// The ranking asks for its rows while the session is checked (the page is
// drawn only once the session is known): one round trip fewer on a slow
// network. Only when this browser's last session was Premium (a Free
// account's page is locked and asks for nothing); unused when the session
// turns out to be gone.
if (location.pathname === "/ranking" && wasPremium()) prefetch(`${WEB}/api/ranking`, rankingQuery(rankingParams(new URLSearchParams(location.search))));
const root = document.getElementById("app")!;
root.textContent = ""; // the "Loading…" placeholder of index.html
render(<App />, root);
