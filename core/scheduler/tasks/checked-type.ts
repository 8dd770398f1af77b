import type { TaskType } from '@certwright/sdk';
import type { Knex } from 'knex';

/**
 * A task type built into the core: beyond its parameters' JSON Schema, it checks what a schema cannot say
 * (a query parses, a team exists) when a task is saved, so the mistake is a 400 then, not a failed run later.
 * Plugin task types (the SDK's TaskType) have the schema only.
 */
export interface CheckedTaskType extends TaskType {
  /**
   * Why the parameters (already valid against parametersSchema) cannot run: a message naming the field, or
   * null. `db`: the handle to read on (an import's transaction), the type's own when absent.
   */
  check(tenant: string, parameters: Record<string, unknown>, db?: Knex): Promise<string | null>;
}

export const isChecked = (type: TaskType): type is CheckedTaskType => typeof (type as Partial<CheckedTaskType>).check === 'function';
