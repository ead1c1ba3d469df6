// What an answer will weigh, estimated before it is written (from the bytes
// each row's metadata and text take as JSON, kept by the index), and MAX_ANSWER_BYTES.
// An estimate errs high: a score or a vector value is counted at the longest
// a number takes as JSON.
import type { Config } from '../config.js';
import { apiError } from '../errors.js';
import type { SearchGroup, SearchHit } from '../index/types.js';
import type { Slices } from '../limits/slices.js';

/** The longest JSON of a float32 value as a double (e.g. -1.1754943508222875e-38) and a comma. */
export const NUMBER_BYTES = 25;
/** `{"id":,"score":,"metadata":,"text":null}` and the comma after a hit or a vector. */
const ITEM_FRAME_BYTES = 48;
/** A hybrid hit's `"vectorScore":,"vectorRank":,"textScore":,"textRank":` around their numbers. */
const ARM_FIELDS_BYTES = 4 * NUMBER_BYTES + 56;
/** An mmr hit's `,"mmrRank":` around its number. */
const MMR_RANK_BYTES = NUMBER_BYTES + 12;
/** `{"value":,"hits":[]}` and the comma after a group. */
const GROUP_FRAME_BYTES = 24;
/** The envelope around the items: success, session, stats, notFound, metrics. */
export const ENVELOPE_BYTES = 2048;

const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** Bytes of hits as JSON, `jsonBytes` being their metadata's and texts' (SearchOutput). */
export function hitsBytes(results: SearchHit[][], jsonBytes: number): number {
  let bytes = ENVELOPE_BYTES + jsonBytes;
  for (const list of results) bytes += listBytes(list);
  return bytes;
}

/**
 * hitsBytes() a query's list at a time, the event loop given back whenever
 * `slices` is due: 64 lists of 100 hits with ids of 256 characters take
 * ~10 ms in one step on a busy machine.
 */
export async function hitsBytesSliced(results: SearchHit[][], jsonBytes: number, slices: Slices): Promise<number> {
  let bytes = ENVELOPE_BYTES + jsonBytes;
  for (const list of results) {
    bytes += listBytes(list);
    await slices.pause();
  }
  return bytes;
}

/** Bytes of one query's hits as JSON, without their metadata and texts. */
function listBytes(list: readonly SearchHit[]): number {
  let bytes = 2;
  for (const hit of list) {
    bytes += ITEM_FRAME_BYTES + NUMBER_BYTES + utf8Bytes(JSON.stringify(hit.id));
    if (hit.vectorRank !== undefined) bytes += ARM_FIELDS_BYTES;
    if (hit.mmrRank !== undefined) bytes += MMR_RANK_BYTES;
  }
  return bytes;
}

/** Each query's groups (groupBy) as hitsBytes() sizes a list: every group's hits, and its value and frame. */
export function groupsAsLists(groups: SearchGroup[][]): { lists: SearchHit[][]; extraBytes: number } {
  const lists: SearchHit[][] = [];
  let extraBytes = 0;
  for (const query of groups) {
    for (const group of query) {
      lists.push(group.hits);
      extraBytes += GROUP_FRAME_BYTES + utf8Bytes(JSON.stringify(group.value));
    }
  }
  return { lists, extraBytes };
}

/** Bytes of one stored vector as JSON: its id, `values` numbers (0 without the vector), its metadata's and text's JSON bytes. */
export function vectorBytes(id: string, values: number, jsonBytes: number): number {
  return ITEM_FRAME_BYTES + utf8Bytes(JSON.stringify(id)) + values * NUMBER_BYTES + jsonBytes;
}

/** 400 ANSWER_TOO_LARGE when `bytes` pass MAX_ANSWER_BYTES; `smaller` says how to ask for less. */
export function assertAnswerSize(config: Config, bytes: number, smaller: string): void {
  if (bytes <= config.maxAnswerBytes) return;
  throw apiError('ANSWER_TOO_LARGE', `the answer would take about ${bytes} bytes, more than the ${config.maxAnswerBytes} of MAX_ANSWER_BYTES; ${smaller}`, {
    answerBytes: bytes,
    maxAnswerBytes: config.maxAnswerBytes,
  });
}
