// The schemas of the parameter table and the format registry in the OpenAPI document: each row as a
// query parameter and a body field, the output formats by content type (docs/operations.md).
import { contentTypes, formatFacts, formatNames } from '../domain/formats.ts';
import { parameters, type Parameter, type ParameterType, type ValueType } from '../domain/parameters.ts';
import type { Json } from './operation.ts';

/** The schema of one value of a parameter. */
function valueSchema(type: ValueType): Json {
  switch (type.kind) {
    case 'string':
      return {
        type: 'string',
        minLength: 1,
        maxLength: type.maxLength,
        ...(type.pattern ? { pattern: type.pattern.source } : {}),
      };
    case 'boolean':
      return { type: 'boolean' };
    case 'integer':
    case 'number':
      return { type: type.kind, minimum: type.min, maximum: type.max };
    case 'enum':
      return { type: 'string', enum: [...type.values] };
  }
}

function typeSchema(type: ParameterType): Json {
  return type.kind === 'list'
    ? { type: 'array', items: valueSchema(type.item), maxItems: type.maxItems }
    : valueSchema(type);
}

/** A row's schema: its type, range and default. */
export function parameterSchema(parameter: Parameter): Json {
  return {
    ...typeSchema(parameter.type),
    ...(parameter.default !== undefined ? { default: structuredClone(parameter.default) } : {}),
  };
}

/** A row's description, with a default that depends on other parameters in words. */
function describe(parameter: Parameter): string {
  const booleans = parameter.type.kind === 'boolean' ? ' Accepts true, false, 1 or 0.' : '';
  return `${parameter.description}${booleans}${parameter.defaultText ? ` Default: ${parameter.defaultText}.` : ''}`;
}

/** Every row as a GET query parameter; a list is the key repeated. */
export function queryParameters(rows: readonly Parameter[] = parameters): Json[] {
  return rows.map((parameter) => ({
    name: parameter.name,
    in: 'query',
    description: describe(parameter),
    schema: parameterSchema(parameter),
    ...(parameter.type.kind === 'list' ? { style: 'form', explode: true } : {}),
  }));
}

/** The POST body: every row but the GET-only ones, as one JSON object; a list is a JSON array. */
export function bodySchema(table: readonly Parameter[] = parameters): Json {
  const rows = table.filter((parameter) => parameter.only !== 'GET');
  return {
    type: 'object',
    description: 'Every parameter of the GET query, under the same name. null means not given.',
    properties: Object.fromEntries(
      rows.map((parameter) => [parameter.name, { ...parameterSchema(parameter), description: describe(parameter) }]),
    ),
    additionalProperties: false,
  };
}

/** The parameters by group, as the operation's description lists them. */
export function parameterGroups(rows: readonly Parameter[] = parameters): string {
  const groups = new Map<string, string[]>();
  for (const { group, name } of rows) groups.set(group, [...(groups.get(group) ?? []), `\`${name}\``]);
  return [
    '| group | parameters |',
    '| --- | --- |',
    ...[...groups].map(([group, names]) => `| ${group} | ${names.join(', ')} |`),
  ].join('\n');
}

/** The output formats an endpoint makes, with their content type, in the format registry's order. */
export function outputFormats(endpoint: 'take' | 'animate' = 'take'): { format: string; contentType: string }[] {
  return formatNames
    .filter((format) => formatFacts(format)[endpoint] !== undefined)
    .map((format) => ({ format, contentType: contentTypes[format] }));
}

/** The answer's bytes by content type. */
export function fileContent(formats = outputFormats()): Json {
  const byType = new Map<string, string[]>();
  for (const { format, contentType } of formats) byType.set(contentType, [...(byType.get(contentType) ?? []), format]);
  return Object.fromEntries(
    [...byType].map(([contentType, formats]) => [
      contentType,
      {
        schema: {
          type: 'string',
          contentMediaType: contentType.split(';')[0],
          description: `format=${formats.join(' or ')}`,
        },
      },
    ]),
  );
}

/** Every output format of /api/take and /api/animate, with its content type. */
export const everyFormat = () => formatNames.map((format) => ({ format, contentType: contentTypes[format] }));

/** The formats a render record names (aliases normalised). */
export const recordFormat = () => ({ type: 'string', enum: everyFormat().map(({ format }) => format) });
