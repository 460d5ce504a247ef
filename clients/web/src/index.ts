// FerryWeb: the browser client for Ferry.
export * as Rank from "./rank.js";
export { RankError } from "./rank.js";
export * from "./json.js";
export * from "./retry.js";
export * from "./merge.js";
export * from "./planner.js";
export { FerryStore } from "./store.js";
export type { StoreOptions, StoredRow, Edit } from "./store.js";
export type { Indexes, IndexValue } from "./indexes.js";
export { SyncEngine, SyncPaused, SyncStopped, streamPageLimit } from "./engine.js";
export { HttpError, NetworkError } from "./http.js";
export { WriteRefused } from "./schemacheck.js";
export type { WriteProblem } from "./schemacheck.js";
export type { SyncEvent, TokenProvider, EngineOptions } from "./engine.js";
export { EventStreamParser } from "./eventstream.js";
export { subscriptionPriorities, defaultTTL } from "./subscriptions.js";
export type { Subscription, SubscriptionPriority, SubscribeOptions, SubscriptionState } from "./subscriptions.js";
