// The alert routes (issue 30): alerts on an asset or on the watchlist, the
// inbox of their events, and webhook endpoints with their delivery logs.
// Shapes come from the generated types (schema.d.ts, `make web-types`);
// docs/ALERTS.md says what each condition watches and when it fires.
import { request, WEB, type Schemas } from "./client";

export type Alert = Schemas["Alert"];
export type AlertEvent = Schemas["AlertEvent"];
export type EventPage = Schemas["EventPage"];
export type Observation = Schemas["Observation"];
export type Condition = Schemas["Condition"];
export type Metric = Schemas["Metric"];
export type NewAlert = Schemas["CreateAlertRequest"];
/** `PATCH`: only the fields given change (the generated type marks the horizon required; the server does not). */
export type AlertChange = Partial<Schemas["UpdateAlertRequest"]>;
export type MarkedRead = Schemas["MarkedRead"];
export type Webhook = Schemas["Webhook"];
export type CreatedWebhook = Schemas["CreatedWebhook"];
export type Delivery = Schemas["Delivery"];
export type DeliveryLog = Schemas["DeliveryLog"];

/** The graded horizons an alert may read (days). */
export const HORIZONS = [7, 30, 90, 180, 365] as const;

const base = `${WEB}/api/alerts`;
const id = (x: string) => encodeURIComponent(x);

export const alerts = {
  list: () => request<Alert[]>("GET", base),
  create: (body: NewAlert) => request<Alert>("POST", base, { body }),
  update: (alertId: string, body: AlertChange) => request<Alert>("PATCH", `${base}/${id(alertId)}`, { body }),
  remove: (alertId: string) => request<void>("DELETE", `${base}/${id(alertId)}`),

  /** Newest first; `unread` keeps the unread ones only. */
  events: (q: { limit: number; offset: number; unread?: boolean }) => request<EventPage>("GET", `${base}/events`, { query: { ...q } }),
  markRead: (body: { ids: string[] } | { all: true }) => request<MarkedRead>("POST", `${base}/events/read`, { body }),
  /** The header's count: a failure there must not send anyone to the sign-in page. */
  unread: () => request<Schemas["UnreadCount"]>("GET", `${base}/unread`, { redirectOn401: false }),

  webhooks: () => request<Webhook[]>("GET", `${base}/webhooks`),
  createWebhook: (url: string) => request<CreatedWebhook>("POST", `${base}/webhooks`, { body: { url } }),
  setWebhookEnabled: (hookId: string, enabled: boolean) => request<Webhook>("PATCH", `${base}/webhooks/${id(hookId)}`, { body: { enabled } }),
  deleteWebhook: (hookId: string) => request<void>("DELETE", `${base}/webhooks/${id(hookId)}`),
  deliveries: (hookId: string) => request<DeliveryLog>("GET", `${base}/webhooks/${id(hookId)}/deliveries`),
  /** Sends a signed sample now, once; answers the attempt's outcome. */
  testWebhook: (hookId: string) => request<Schemas["TestDelivery"]>("POST", `${base}/webhooks/${id(hookId)}/test`),
};
