import type { JsonBody } from '../api/types.ts';
import { api } from './api.ts';

export type Device = JsonBody<'/v1/devices', 'get', 200>['data'][number];

/** The device presets `device` takes (public). */
export async function fetchDevices(signal?: AbortSignal): Promise<Device[]> {
  return (await api<JsonBody<'/v1/devices', 'get', 200>>('/v1/devices', signal ? { signal } : {}))
    .data;
}
