// What a rule over parsed values is: the refusals it finds, each naming its parameter.

/** One refused parameter, as `error_details` lists it. */
export interface Refusal {
  parameter: string;
  message: string;
}

/** Parsed request values by parameter name. */
export type Values = Record<string, unknown>;
/** A rule over parsed values: the parameters it refuses. */
export type Rule = (values: Values) => Refusal[];

/** True when the request gave `name`. */
export const given = (values: Values, name: string) => values[name] !== undefined;

/**
 * Options that refine another one mean nothing without it (docs/options.md): each of `needs` is the
 * option, what it needs, and whether that is given.
 */
export function unmet(values: Values, needs: [name: string, what: string, met: boolean][]): Refusal[] {
  return needs
    .filter(([name, , met]) => given(values, name) && values[name] !== false && !met)
    .map(([parameter, what]) => ({ parameter, message: `needs ${what}` }));
}
