/**
 * .what = a byte budget shared by every running capture of one bash toolbox
 * .why = each call's capture is bounded, but the number of calls is not: N concurrent floods must fit one total
 */
export class CaptureBudget {
  private usedBytes = 0;

  public constructor(private readonly limitBytes: number) {}

  /** .what = grants up to wantedBytes, as much as is left (0 when spent) */
  public take(wantedBytes: number): number {
    const grantedBytes = Math.max(0, Math.min(wantedBytes, this.limitBytes - this.usedBytes));
    this.usedBytes += grantedBytes;
    return grantedBytes;
  }

  /** .what = returns bytes once their capture is done with them */
  public give(bytes: number): void {
    this.usedBytes = Math.max(0, this.usedBytes - bytes);
  }

  /** .what = bytes granted and not yet given back */
  public get takenBytes(): number {
    return this.usedBytes;
  }
}
