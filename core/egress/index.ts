/** Outbound HTTP of the platform and of plugins through the configured HTTP proxies. */
export { ProxyRouter, type ProxyRoute } from './proxy-router.js';
export { fetchThrough } from './fetch-through.js';
export { sendPinnedThroughProxy } from './pinned-request.js';
export { patternRank, pickProxy } from './destinations.js';
