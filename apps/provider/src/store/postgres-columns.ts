// A batched statement's parameters: rows sent as one array per column and read back by unnest(). The column list
// (names, types, parameter numbers) and the values come from one declaration, so each statement's field order lives
// in one place (as pg-protocol keeps each message's).

/** A column: its PostgreSQL element type and its value for a row (i: the row's place in its array). */
export type ColumnOf<T> = readonly [type: string, value: (row: T, i: number) => unknown]

/** Columns by name, in order. */
export type Columns<T> = Readonly<Record<string, ColumnOf<T>>>

/** One unnest() of a statement: its alias, its columns, and the rows a batch gives it. */
export interface ArrayGroup<B, T> {
  alias: string
  columns: Columns<T>
  rowsOf(batch: B): readonly T[]
}

/** Declares one unnest() group (the row type is checked against the columns). */
export const arrayGroup = <B, T>(alias: string, columns: Columns<T>, rowsOf: (batch: B) => readonly T[]) =>
  ({ alias, columns, rowsOf }) as ArrayGroup<B, unknown>

/** The parameters of a statement made of unnest() groups, numbered in the order the groups are given. */
export class ArrayParameters<B> {
  readonly #groups: readonly { rowsOf(batch: B): readonly unknown[]; values: ColumnOf<unknown>[1][] }[]
  readonly #sql = new Map<string, { arrays: string; names: string }>()

  /** first: the number of the first array parameter (the ones before it are the statement's own scalars). */
  constructor(groups: readonly ArrayGroup<B, unknown>[], first = 1) {
    let n = first
    for (const { alias, columns } of groups) {
      const names = Object.keys(columns)
      const arrays = names.map((name, k) => `$${n + k}::${(columns[name] as ColumnOf<unknown>)[0]}[]`)
      this.#sql.set(alias, { arrays: arrays.join(', '), names: names.join(', ') })
      n += names.length
    }
    this.#groups = groups.map((g) => ({ rowsOf: g.rowsOf, values: Object.values(g.columns).map(([, value]) => value) }))
  }

  /**
   * `unnest($n::type[], …) AS alias(name, …)` of the group named `alias`; with `ordinality`, each row's place in its
   * arrays as one more column of that name.
   */
  unnest(alias: string, ordinality?: string): string {
    const sql = this.#sql.get(alias)
    if (sql === undefined) throw new TypeError(`no parameter group ${alias}`)
    return ordinality === undefined
      ? `unnest(${sql.arrays}) AS ${alias}(${sql.names})`
      : `unnest(${sql.arrays}) WITH ORDINALITY AS ${alias}(${sql.names}, ${ordinality})`
  }

  /** The statement's values for a batch: one array per column, group after group. */
  values(batch: B): unknown[][] {
    const values: unknown[][] = []
    for (const group of this.#groups) {
      const rows = group.rowsOf(batch)
      for (const value of group.values) values.push(rows.map(value))
    }
    return values
  }
}
