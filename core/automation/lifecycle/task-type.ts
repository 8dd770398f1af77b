import type { ConfigRegistry } from '../../config-objects/registry.js';
import type { CheckedTaskType } from '../../scheduler/tasks/checked-type.js';
import { AUTOMATION_POLICY_TYPE } from '../policies/config-type.js';
import type { LifecycleRunner } from './runner.js';

/** The task type's name (`type` of a scheduled task). */
export const LIFECYCLE_TASK = 'lifecycle';

/**
 * The `lifecycle` task type: at each run, the work of one automation policy (runner.ts). Its one parameter
 * names the policy, a reference (the policy cannot be deleted while a task names it).
 */
export function lifecycleTaskType(runner: LifecycleRunner, registry: ConfigRegistry): CheckedTaskType {
  return {
    category: 'lifecycle',
    description: "Renews what an automation policy covers when it is due (through the request workflow), revokes superseded certificates after the policy's grace, cancels stale requests",
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['policy'],
      properties: { policy: { type: 'string', minLength: 1, maxLength: 191, description: 'The automation policy (/api/v1/automation/policies/)' } },
    },
    check: async (tenant, parameters, db) =>
      (await registry.getStored(AUTOMATION_POLICY_TYPE, tenant, String(parameters.policy), db)) ? null : `parameters.policy: no automation policy "${String(parameters.policy)}"`,
    run: ({ tenant, parameters }) => runner.run(tenant, String(parameters.policy)),
  };
}
