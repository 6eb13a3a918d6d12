import { parseListingQuery, type ListingQuery } from '@testrun/contracts';
import { ApiError } from '../errors';

/** A listing's query checked, or 400 `invalid_query` listing every fault with the parameter's path. */
export function listingQuery(kind: 'runs' | 'suite-runs', query: Record<string, unknown>): ListingQuery {
  const parsed = parseListingQuery(kind, query);
  if (!parsed.ok) {
    const names = [...new Set(parsed.errors.map((e) => e.path.slice(1)))].join(', ');
    throw new ApiError('invalid_query', `The query is invalid (${names}); see errors.`, { errors: parsed.errors });
  }
  return parsed.value;
}
