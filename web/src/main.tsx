import { render } from "preact";
import "uplot/dist/uPlot.min.css";
import "./styles.css";
import { App } from "./app";
import { interceptLinks } from "./router";

interceptLinks();
const root = document.getElementById("app")!;
root.textContent = ""; // the "Loading…" placeholder of index.html
render(<App />, root);
