import type { Migration } from '../migrator.js';
import { events0001 } from './0001_events.js';
import { pluginKv0002 } from './0002_plugin_kv.js';
import { scheduler0003 } from './0003_scheduler.js';
import { security0004 } from './0004_security.js';
import { pki0005 } from './0005_pki.js';
import { inventory0006 } from './0006_inventory.js';
import { exactStrings0007 } from './0007_exact_strings.js';
import { requests0008 } from './0008_requests.js';
import { discoveryEvents0009 } from './0009_discovery_events.js';
import { certificateDocuments0010 } from './0010_certificate_documents.js';
import { eventIntegrity0011 } from './0011_event_integrity.js';
import { triggers0012 } from './0012_triggers.js';
import { eventAnalytics0013 } from './0013_event_analytics.js';
import { pkiConnectors0014 } from './0014_pki_connectors.js';
import { certificateProfiles0015 } from './0015_certificate_profiles.js';
import { requestWorkflow0016 } from './0016_request_workflow.js';
import { pluginKvExpiry0017 } from './0017_plugin_kv_expiry.js';
import { eventNode0018 } from './0018_event_node.js';
import { teamWebhookPrincipalEnabled0019 } from './0019_team_webhook_principal_enabled.js';
import { pkiQueueLimits0020 } from './0020_pki_queue_limits.js';
import { checkpointOrdinals0021 } from './0021_checkpoint_ordinals.js';
import { configObjects0022 } from './0022_config_objects.js';

/** Core migrations in order. Append only: never edit one that has shipped. */
export const CORE_MIGRATIONS: readonly Migration[] = [events0001, pluginKv0002, scheduler0003, security0004, pki0005, inventory0006, exactStrings0007, requests0008, discoveryEvents0009, certificateDocuments0010, eventIntegrity0011, triggers0012, eventAnalytics0013, pkiConnectors0014, certificateProfiles0015, requestWorkflow0016, pluginKvExpiry0017, eventNode0018, teamWebhookPrincipalEnabled0019, pkiQueueLimits0020, checkpointOrdinals0021, configObjects0022];
