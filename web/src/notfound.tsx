// The in-app not-found page: for a page path nothing answers (the router's
// last resort) and for an unknown ticker (the asset page renders
// `<NotFound ticker="NOPE" />` on a 404). It says what was not found, in a
// sentence, and offers a way on: a search for an asset by ticker or name,
// the watchlist and the catalog.
import { AssetSearch } from "./search";
import { useTitle } from "./lib";
import { isPremium, useSession } from "./session";

export function NotFound({ title, message, ticker }: { title?: string; message?: string; ticker?: string }) {
  const { user } = useSession();
  const heading = title ?? (ticker ? `No asset “${ticker}”` : "Page not found");
  useTitle(ticker ? `${ticker} not found` : "Page not found");
  const sentence =
    message ??
    (ticker
      ? `There is no active asset with the ticker “${ticker}” in the catalog. Check the spelling, or search for it by name below.`
      : "There is nothing at this address. Search for an asset below, or go to your watchlist or the catalog.");
  return (
    <main class="page narrow not-found">
      <h1>{heading}</h1>
      <p>{sentence}</p>
      <section class="card" aria-labelledby="nf-search-h">
        <h2 id="nf-search-h">Find an asset</h2>
        <AssetSearch id="nf-search" premium={isPremium(user)} label="Ticker or name" showLabel initial={ticker ?? ""} />
      </section>
      <p>
        Or go to <a href="/">your watchlist</a> or <a href="/explore">explore the catalog</a>.
      </p>
    </main>
  );
}
