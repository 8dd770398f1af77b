import { ProblemError } from '../../errors/index.js';
import { parseFiniteDuration } from '../../http/finite-duration.js';

type Json = Record<string, unknown>;

/**
 * Horizon's name of a PKI connector type Certwright installs as a plugin. Horizon clients (the vendor's MCP
 * server, horizon-mcp src/tools/config/pki-connectors.ts CONNECTOR_TYPES) can only send one of Horizon's 22
 * type names, and its update tool sends `type` back and refuses to run unless it equals the stored one.
 */
export interface HorizonAlias {
  /** Horizon's `type`. */
  horizon: string;
  /** The installed type it names. */
  type: string;
  /**
   * Horizon's top-level fields of that type that mean something here, each applied to the settings (the
   * `configuration`) it stands for; null puts the setting back to its default. Horizon fields not listed
   * have no counterpart and are refused (settings.ts).
   */
  fields: Record<string, (value: unknown, settings: Json) => void>;
}

const invalid = (detail: string): ProblemError => new ProblemError('PKI-CONN-002', { detail });

/**
 * `integrated` is Horizon's "Integrated CA" (pki-connectors.schema.json IntegratedCAConnector; the v2 Go
 * SDK's IntegratedCAConnector): the CA the platform itself runs and signs with — what `local-ca` is. Its
 * other Horizon fields (caKey/caCert: import an existing CA; crtLifetime, crtBackDate, signAlg, certType,
 * checkPop, crlPath, asyncParams, retryInterval) have no local-ca setting: the local CA makes its own keys,
 * and validity and key usage come from the certificate profile. Horizon's other 21 types (acmeenroll,
 * digicert, ejbca, …) are CAs run elsewhere; none is aliased: `acme-upstream` enrolls from an ACME CA like
 * `acmeenroll` does, but Horizon's fields for it (endPoint, dnsChallengeProvider, an `eab` credentials name,
 * accountKeyType) do not map onto its settings (directoryUrl, eab {kid, hmacKey}), so an alias would accept
 * bodies it could not honour.
 */
const INTEGRATED: HorizonAlias = {
  horizon: 'integrated',
  type: 'local-ca',
  fields: {
    // Horizon's required key family switch (legacy | hybrid | pqc): the local CA has classical keys only.
    cryptoType: (value) => {
      if (value === null || value === 'legacy') return;
      throw invalid(`cryptoType: ${JSON.stringify(value)} — the local CA signs with classical keys only (cryptoType "legacy"; its keyType setting picks the algorithm)`);
    },
    // Horizon's CRL validity ("7 days") is the local CA's crlValidityHours.
    crlLifetime: (value, settings) => {
      if (value === null) {
        delete settings.crlValidityHours;
        return;
      }
      const ms = parseFiniteDuration(value);
      if (ms === null || ms < 3_600_000 || ms % 3_600_000 !== 0) {
        throw invalid(`crlLifetime: ${JSON.stringify(value)} is not a whole number of hours such as "7 days" or "24 hours" (the local CA's crlValidityHours)`);
      }
      settings.crlValidityHours = ms / 3_600_000;
    },
  },
};

const BY_HORIZON = new Map<string, HorizonAlias>([[INTEGRATED.horizon, INTEGRATED]]);
const BY_TYPE = new Map<string, HorizonAlias>([[INTEGRATED.type, INTEGRATED]]);

/** The alias a Horizon type name stands for, if any. */
export const aliasOfHorizon = (name: string): HorizonAlias | undefined => BY_HORIZON.get(name);

/** The Horizon alias of an installed type, if any (its Horizon fields are accepted under either name). */
export const aliasOfType = (type: string): HorizonAlias | undefined => BY_TYPE.get(type);
