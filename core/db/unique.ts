/** Whether a database error is a unique / primary key violation, on SQLite, MySQL/MariaDB and PostgreSQL. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; errno?: number } | null;
  if (!e) return false;
  return (
    e.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    e.code === 'ER_DUP_ENTRY' ||
    e.errno === 1062 ||
    e.code === '23505'
  );
}
