/**
 * @certwright/sdk/scep-server — an SCEP (RFC 8894) server over ctx.enrollment, for protocol plugins: the SCEP
 * plugin mounts it on /scep and /certsrv, the MDM plugin on /intune and /jamf with hooks (Intune validates each
 * challenge with Microsoft's API; Jamf hands out challenges by webhook). A vendor's MDM flavour does the same.
 */
export { createScepTables, dropScepTables } from './tables.js';
export { RaStore, type RegistrationAuthority } from './ra.js';
export { ScepService, ScepHttpError, ScepRefusal, type ScepHooks, type ScepServiceOptions, type PkcsReqInput } from './service.js';
export { addScepBodyParser, registerScepRoutes, type ScepRoutePaths } from './routes.js';
export { scepSettings, allowedCiphers, allowedDigests, capabilities, type ScepSettings } from './settings.js';
